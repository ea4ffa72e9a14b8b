"""A tensor network: an einsum's subscripts bound to concrete operand shapes.

Size-1 broadcasting follows numpy, torch and opt_einsum: a label bound to 1 in one operand and to n
in another takes n (the size-1 dim is broadcast), and the pair is kept in `broadcasts` so the lint
engine can report it (TCL201). Any other disagreement is refused. Dims must be positive: a size-0
dim makes every order cost 0 FLOPs and hides the question this module exists to answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence

from ..counting import checked_product
from ..einsum_subscripts import INDEX_LETTERS, EinsumSpec, bind_labels, parse_subscripts
from ..errors import EinsumError



@dataclass(frozen=True, slots=True)
class Network:
    """Operands' label strings (ellipsis expanded), the output labels and every label's size.

    The masks are the same facts as bit sets (bit i = i-th label of `sizes`): the searches run on
    them because set algebra on ints is an order of magnitude cheaper than on frozensets.
    """

    subscripts: str  # as the user wrote it
    inputs: tuple[str, ...]
    output: str
    sizes: tuple[tuple[str, int], ...]  # label -> size, in order of first appearance
    shapes: tuple[tuple[int, ...], ...]
    broadcasts: tuple[tuple[str, int, int], ...] = ()  # (label, bound size, size-1 or n seen later)
    input_masks: tuple[int, ...] = field(default=(), repr=False, compare=False)
    output_mask: int = field(default=0, repr=False, compare=False)
    label_sizes: tuple[int, ...] = field(default=(), repr=False, compare=False)

    @property
    def canonical(self) -> str:
        return ",".join(self.inputs) + "->" + self.output

    @property
    def operand_count(self) -> int:
        return len(self.inputs)

    def size_dict(self) -> dict[str, int]:
        return dict(self.sizes)

    def elements(self, labels: str) -> int:
        """Elements of a tensor carrying `labels` (checked against 2**63-1)."""
        size = self.size_dict()
        return checked_product((size[label] for label in labels), "elements")


def _ellipsis_table(spec: EinsumSpec) -> dict[str, str]:
    """Unused ASCII letters for the dims an ellipsis covers, so every subscript we print is one a
    user could paste back into np.einsum (kept private when the 52 letters run out)."""
    used = set("".join(spec.inputs)) | set(spec.output)
    private = sorted(c for c in used if c not in INDEX_LETTERS)
    free = [c for c in INDEX_LETTERS if c not in used]
    if len(private) > len(free):
        return {}
    return dict(zip(private, free))


def _check_shapes(shapes: object) -> tuple[tuple[int, ...], ...]:
    if isinstance(shapes, (str, bytes)) or not isinstance(shapes, Sequence):
        raise EinsumError("shapes", "expected one shape (a sequence of ints) per operand")
    checked = []
    for index, shape in enumerate(shapes):
        if isinstance(shape, (str, bytes)) or not isinstance(shape, Sequence):
            raise EinsumError("shapes", f"operand {index}: expected a sequence of ints, got {shape!r}")
        dims = []
        for position, dim in enumerate(shape):
            if type(dim) is not int:
                raise EinsumError(
                    "shapes", f"operand {index}, dim {position}: expected an int, got {type(dim).__name__} {dim!r}"
                )
            if dim < 1:
                raise EinsumError("shapes", f"operand {index}, dim {position}: sizes must be positive, got {dim}")
            dims.append(dim)
        checked.append(tuple(dims))
    if not checked:
        raise EinsumError("shapes", "an einsum needs at least one operand")
    return tuple(checked)


def build_network(subscripts: str, shapes: Sequence[Sequence[int]]) -> Network:
    """Parse `subscripts` for operands of these shapes and bind every label to its size.

    Refuses (EinsumError, naming the operand and dim): a term whose letter count differs from its
    operand's rank, a label bound to two sizes neither of which is 1, an output label absent from
    the inputs, a label repeated within one operand (diagonals and traces are not modelled).
    """
    checked = _check_shapes(shapes)
    spec = parse_subscripts(subscripts, [len(shape) for shape in checked])
    # Bind before relabelling: a size conflict inside an ellipsis is then reported as '...'.
    bound, seen_broadcasts, _ = bind_labels(spec, checked)
    rename = _ellipsis_table(spec)
    table = str.maketrans(rename)
    inputs = tuple(term.translate(table) for term in spec.inputs)
    output = spec.output.translate(table)
    bound = {rename.get(label, label): size for label, size in bound.items()}
    broadcasts = [(rename.get(label, label), a, b) for label, a, b in seen_broadcasts]
    order: list[str] = []
    for term in inputs:
        order.extend(label for label in term if label not in order)
    sizes = tuple((label, bound[label]) for label in order)
    for index, shape in enumerate(checked):
        checked_product(shape, f"shapes[{index}]")
    bit = {label: 1 << position for position, label in enumerate(order)}
    masks = tuple(sum(bit[label] for label in term) for term in inputs)
    return Network(
        subscripts=subscripts,
        inputs=inputs,
        output=output,
        sizes=sizes,
        shapes=checked,
        broadcasts=tuple(broadcasts),
        input_masks=masks,
        output_mask=sum(bit[label] for label in output),
        label_sizes=tuple(size for _, size in sizes),
    )


def network_from_dims(subscripts: str, dims: Mapping[str, int]) -> Network:
    """Build a network from label sizes (`--dim i=1000`) instead of operand shapes.

    An ellipsis has no letters to bind, so it is refused here; pass shapes instead.
    """
    if type(subscripts) is not str:
        raise EinsumError("subscripts", "subscripts must be a string")
    lhs = subscripts.replace(" ", "").partition("->")[0]
    if "." in lhs:
        raise EinsumError("subscripts", "an ellipsis needs operand shapes; letter sizes cannot bind it")
    shapes = []
    for index, term in enumerate(lhs.split(",")):
        shape = []
        for label in term:
            if label not in dims:
                raise EinsumError("dims", f"operand {index}: no size given for index {label!r}")
            shape.append(dims[label])
        shapes.append(shape)
    used = set(lhs)
    extra = sorted(label for label in dims if label not in used)
    if extra:
        raise EinsumError("dims", f"index {extra[0]!r} does not appear in {subscripts!r}")
    return build_network(subscripts, shapes)

"""Contract 7a: models built as users build them (`build:`, `entry: METHOD`, `site_packages`).

The timm-style fixture library (tests/whole_model/fixtures/build_env/site-packages/timmish: a
Vision Transformer with many keyword constructor parameters, variants registered by a decorator
and built by name) is read through `site_packages` and built by each of its three user-facing
forms — the class called with keywords, a variant's factory function, `create_model(name, **kw)`
— with keywords that change the size; each total must equal FlopCounterMode on the same library
imported and built the same way in torch."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tensorcost_lint.cli.main import main

torch = pytest.importorskip("torch")

from tests.whole_model.model_runs import counted_flops  # noqa: E402

SITE = Path(__file__).resolve().parent / "fixtures" / "build_env" / "site-packages"
IMAGE = 32


def _run(tmp_path, capsys, models: str, *, site: str | None = str(SITE), dims: str = "{batch: 2}",
         extra: str = "", names=()) -> tuple[int, list, str]:
    config = tmp_path / "tensorcost.yaml"
    site_line = f"site_packages: '{site}'\n" if site is not None else ""
    config.write_text(f"dims: {dims}\n{site_line}{extra}models:\n{models}")
    code = main(["model", *names, "--config", str(config), "--format", "json"])
    captured = capsys.readouterr()
    records = json.loads(captured.out)["models"] if code == 0 else []
    return code, records, captured.err


@pytest.fixture(scope="module")
def timmish():
    sys.path.insert(0, str(SITE))  # the reference side imports the library; the analysis never does
    try:
        import timmish as library
        yield library
    finally:
        sys.path.remove(str(SITE))
        for name in [n for n in sys.modules if n == "timmish" or n.startswith("timmish.")]:
            del sys.modules[name]


# (build expression, how torch builds the same model): sizes other than the defaults throughout
BUILDS = {
    "class": ("VisionTransformer(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=4, num_classes=10)",
              lambda t: t.VisionTransformer(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=4,
                                            num_classes=10)),
    "class-wider": ("VisionTransformer(img_size=32, patch_size=4, embed_dim=96, depth=3, num_heads=6, "
                    "mlp_ratio=2.0, num_classes=7)",
                    lambda t: t.VisionTransformer(img_size=32, patch_size=4, embed_dim=96, depth=3, num_heads=6,
                                                  mlp_ratio=2.0, num_classes=7)),
    "factory": ("timmish.models.vision_transformer.vit_small_patch16_224(img_size=32, depth=2)",
                lambda t: t.models.vision_transformer.vit_small_patch16_224(img_size=32, depth=2)),
    "registry": ("timmish.create_model('vit_tiny_patch16_224', img_size=32, patch_size=8, depth=2, num_classes=10)",
                 lambda t: t.create_model("vit_tiny_patch16_224", img_size=32, patch_size=8, depth=2,
                                          num_classes=10)),
    # a CNN by a tagged name (`str.partition`/`split` parse it), keywords set to None dropped, layer
    # factories that test `isinstance(layer, functools.partial)` and unbind it, `to_ntuple` through
    # `itertools.repeat`, stages registered by `self.add_module(*stage)`, a padding computed to 0,
    # `sum(depths)` in a drop rate, and a pooled head flattened by `nn.Flatten(1)`
    "registry-cnn": ("timmish.create_model('resnet10t.a1_in1k', num_classes=10, drop_path_rate=None)",
                     lambda t: t.create_model("resnet10t.a1_in1k", num_classes=10, drop_path_rate=None)),
    "registry-cnn-names": ("timmish.create_model('resnet10t', act_layer='silu', norm_layer='batch_norm', "
                           "channels=(8, 16, 24, 32))",
                           lambda t: t.create_model("resnet10t", act_layer="silu", norm_layer="batch_norm",
                                                    channels=(8, 16, 24, 32))),
}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("form", sorted(BUILDS))
def test_a_built_model_equals_flop_counter_mode(tmp_path, capsys, timmish, form, mode):
    expression, build = BUILDS[form]
    models = f"  vit:\n    build: \"{expression}\"\n    inputs: {{x: \"float32 batch 3 {IMAGE} {IMAGE}\"}}\n" \
             f"    mode: {mode}\n"
    code, records, err = _run(tmp_path, capsys, models)
    assert code == 0, err
    record = records[0]
    torch.manual_seed(0)
    reference = counted_flops(build(timmish), torch.randn(2, 3, IMAGE, IMAGE), training=mode == "training")
    assert record["complete"] is True
    assert record["totals"]["flops"] == reference
    assert record["entry"] == "forward"
    assert record["packages_read"] == {"timmish": "0.9.2"}


def test_keywords_change_the_size(tmp_path, capsys, timmish):
    """The keywords are bound (not the 768-wide defaults): a deeper model costs more, exactly so."""
    totals = {}
    for depth in (1, 3):
        models = f"  vit:\n    build: \"VisionTransformer(img_size=32, patch_size=8, embed_dim=64, depth={depth}, " \
                 f"num_heads=4)\"\n    inputs: {{x: \"float32 batch 3 32 32\"}}\n"
        code, records, err = _run(tmp_path, capsys, models)
        assert code == 0, err
        totals[depth] = records[0]["totals"]["flops"]
        reference = counted_flops(timmish.VisionTransformer(img_size=32, patch_size=8, embed_dim=64, depth=depth,
                                                            num_heads=4), torch.randn(2, 3, 32, 32), training=False)
        assert totals[depth] == reference
    assert totals[3] > totals[1]


def test_another_method_of_the_built_object_is_the_entry(tmp_path, capsys, timmish):
    models = "  vit:\n    build: \"VisionTransformer(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=4)\"\n" \
             "    entry: forward_features\n    inputs: {x: \"float32 batch 3 32 32\"}\n"
    code, records, err = _run(tmp_path, capsys, models)
    assert code == 0, err
    model = timmish.VisionTransformer(img_size=32, patch_size=8, embed_dim=64, depth=2, num_heads=4).eval()
    from torch.utils.flop_counter import FlopCounterMode

    with FlopCounterMode(display=False) as counter:
        model.forward_features(torch.randn(2, 3, 32, 32))
    assert records[0]["complete"] is True and records[0]["totals"]["flops"] == counter.get_total_flops()


# -- a user's model importing a layer from an installed package ------------------------------------------

USER_MODEL = '''from torch import nn

from layerkit.layers import SwiGLU


class Net(nn.Module):
    def __init__(self, dim=64, hidden=160, classes=10):
        super().__init__()
        self.embed = nn.Linear(dim, dim)
        self.ffn = SwiGLU(dim, hidden)
        self.head = nn.Linear(dim, classes)

    def forward(self, x):
        return self.head(self.ffn(self.embed(x)))
'''


def _user_model(tmp_path):
    (tmp_path / "net.py").write_text(USER_MODEL)
    return "  net:\n    build: \"Net(dim=48, hidden=96)\"\n    inputs: {x: \"float32 batch 48\"}\n"


def test_a_layer_imported_from_an_installed_package_is_read_through_site_packages(tmp_path, capsys):
    code, records, err = _run(tmp_path, capsys, _user_model(tmp_path))
    assert code == 0, err
    record = records[0]
    sys.path.insert(0, str(SITE))
    try:
        namespace: dict = {}
        exec(compile(USER_MODEL, str(tmp_path / "net.py"), "exec"), namespace)  # the reference runs it
        reference = counted_flops(namespace["Net"](dim=48, hidden=96), torch.randn(2, 48), training=False)
    finally:
        sys.path.remove(str(SITE))
        sys.modules.pop("layerkit.layers", None)
        sys.modules.pop("layerkit", None)
    assert record["complete"] is True and record["totals"]["flops"] == reference
    assert record["packages_read"] == {"layerkit": "1.4.0"}
    assert {row["class"] for row in record["modules"]} >= {"Net", "SwiGLU"}


def test_without_site_packages_the_package_is_one_reason_line(tmp_path, capsys):
    """`none` (the default) keeps today's confinement: the import is not followed, and says why."""
    code, records, err = _run(tmp_path, capsys, _user_model(tmp_path), site=None)
    assert code == 0, err
    record = records[0]
    assert record["complete"] is False and record["packages_read"] == {}
    reasons = [item["reason"] for item in record["not_followed"]]
    assert reasons and all("package `layerkit`" in reason and "site_packages" in reason for reason in reasons)


def test_site_packages_auto_reads_the_active_environment():
    from tensorcost_lint.config.project_config import parse_config
    from tensorcost_lint.config.site_packages import active_site_folders

    config = parse_config({"site_packages": "auto"}, "tensorcost.yaml", None)
    assert config.site_folders == active_site_folders() and config.site_folders
    assert all(Path(folder).name in ("site-packages", "dist-packages") for folder in config.site_folders)
    installed = next(Path(folder) for folder in config.site_folders if (Path(folder) / "torch").is_dir())
    assert config.confinement.allows(installed / "torch" / "__init__.py")
    if not Path(installed).resolve().is_relative_to(Path.cwd().resolve()):  # a venv inside the repo is the project's
        assert not parse_config({}, "tensorcost.yaml", None).confinement.allows(installed / "torch" / "__init__.py")


# -- transformers, read from the installed source ----------------------------------------------------------

def _llama_config(tmp_path) -> None:
    transformers = pytest.importorskip("transformers")
    config = transformers.LlamaConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4,
                                      num_key_value_heads=2, num_hidden_layers=2, vocab_size=512,
                                      max_position_embeddings=128, pad_token_id=0, bos_token_id=1, eos_token_id=2)
    config._attn_implementation = "eager"
    config.to_json_file(str(tmp_path / "llama.config.json"))
    return config


def _hf_reference(model) -> dict:
    from torch.utils.flop_counter import FlopCounterMode

    torch.manual_seed(0)
    ids = torch.randint(3, 100, (2, 32))
    model.eval()
    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(input_ids=ids)
    inference = counter.get_total_flops()
    model.train()
    with FlopCounterMode(display=False) as counter:
        model(input_ids=ids).logits.float().sum().backward()
    return {"inference": inference, "training": counter.get_total_flops()}


def _hf_models(build: str) -> str:
    return "".join(f"  llama-{mode}:\n    build: \"{build}\"\n    dims_from: llama.config.json\n"
                   f"    inputs: {{input_ids: \"int64 batch seq\"}}\n    mode: {mode}\n"
                   f"    assume: {{\"self.config._attn_implementation\": eager}}\n"
                   for mode in ("inference", "training"))


def test_llama_built_from_its_config_equals_flop_counter_mode(tmp_path, capsys):
    config = _llama_config(tmp_path)
    import transformers

    code, records, err = _run(tmp_path, capsys, _hf_models("LlamaForCausalLM(config)"), site="auto",
                              dims="{batch: 2, seq: 32}", extra="causal_attention_flops: dense\n")
    assert code == 0, err
    reference = _hf_reference(transformers.LlamaForCausalLM(config))
    for record in records:
        mode = record["mode"]
        assert record["complete"] is True and record["totals"]["flops"] == reference[mode], mode
        assert record["packages_read"]["transformers"] == transformers.__version__
        assert "torch" not in record["packages_read"]  # modelled by the analysis, never read as source


def test_auto_model_from_config_equals_flop_counter_mode(tmp_path, capsys):
    config = _llama_config(tmp_path)
    import transformers

    code, records, err = _run(tmp_path, capsys, _hf_models("transformers.AutoModelForCausalLM.from_config(config)"),
                              site="auto", dims="{batch: 2, seq: 32}", extra="causal_attention_flops: dense\n")
    assert code == 0, err
    reference = _hf_reference(transformers.AutoModelForCausalLM.from_config(config))
    for record in records:
        assert record["complete"] is True and record["totals"]["flops"] == reference[record["mode"]]


# -- vision models from the active environment's installed source -----------------------------------------

# x-transformers models as its users build them: (build call, tensorcost inputs, torch inputs). The
# attention layers are an argument built by another call; `context` reaches the layers only through
# the wrapper's `**kwargs`.
X_TRANSFORMERS = {
    "vit": ("ViTransformerWrapper(image_size=32, patch_size=8, num_classes=10, "
            "attn_layers=Encoder(dim=64, depth=2, heads=4))",
            {"img": "float32 batch 3 32 32"}, lambda: {"img": torch.randn(2, 3, 32, 32)}),
    "cross-attend": ("TransformerWrapper(num_tokens=256, max_seq_len=64, "
                     "attn_layers=Decoder(dim=64, depth=2, heads=4, cross_attend=True))",
                     {"x": "int64 batch 16", "context": "float32 batch 8 64"},
                     lambda: {"x": torch.randint(0, 256, (2, 16)), "context": torch.randn(2, 8, 64)}),
    "shift-tokens": ("TransformerWrapper(num_tokens=256, max_seq_len=64, "
                     "attn_layers=Decoder(dim=64, depth=2, heads=4, shift_tokens=1))",
                     {"x": "int64 batch 16"}, lambda: {"x": torch.randint(0, 256, (2, 16))}),
    "rotary": ("TransformerWrapper(num_tokens=256, max_seq_len=64, "
               "attn_layers=Decoder(dim=64, depth=2, heads=4, rotary_pos_emb=True))",
               {"x": "int64 batch 16"}, lambda: {"x": torch.randint(0, 256, (2, 16))}),
    "gate-values": ("TransformerWrapper(num_tokens=256, max_seq_len=64, "
                    "attn_layers=Decoder(dim=64, depth=2, heads=4, attn_gate_values=True))",
                    {"x": "int64 batch 16"}, lambda: {"x": torch.randint(0, 256, (2, 16))}),
    "macaron": ("TransformerWrapper(num_tokens=256, max_seq_len=64, "
                "attn_layers=Decoder(dim=64, depth=2, heads=4, macaron=True))",
                {"x": "int64 batch 16"}, lambda: {"x": torch.randint(0, 256, (2, 16))}),
    "relative-position-bias": ("TransformerWrapper(num_tokens=256, max_seq_len=64, "
                               "attn_layers=Encoder(dim=64, depth=2, heads=4, rel_pos_bias=True))",
                               {"x": "int64 batch 16"}, lambda: {"x": torch.randint(0, 256, (2, 16))}),
    "alibi": ("TransformerWrapper(num_tokens=256, max_seq_len=64, "
              "attn_layers=Decoder(dim=64, depth=2, heads=4, alibi_pos_bias=True))",
              {"x": "int64 batch 16"}, lambda: {"x": torch.randint(0, 256, (2, 16))}),
    "qk-norm": ("TransformerWrapper(num_tokens=256, max_seq_len=64, "
                "attn_layers=Decoder(dim=64, depth=2, heads=4, attn_qk_norm=True))",
                {"x": "int64 batch 16"}, lambda: {"x": torch.randint(0, 256, (2, 16))}),
}


@pytest.mark.parametrize("mode", ["inference", "training"])
@pytest.mark.parametrize("case", sorted(X_TRANSFORMERS))
def test_an_installed_x_transformers_model_built_with_nested_calls(tmp_path, capsys, case, mode):
    """x-transformers read from the installed package (`site_packages: auto`), built as its users
    build it, against FlopCounterMode on the same build imported in torch."""
    x_transformers = pytest.importorskip("x_transformers")
    from tests.whole_model.model_runs import flop_counter

    build, specs, make_inputs = X_TRANSFORMERS[case]
    inputs = ", ".join(f"{name}: \"{spec}\"" for name, spec in specs.items())
    models = (f"  xt:\n    build: \"x_transformers.{build.replace('attn_layers=', 'attn_layers=x_transformers.')}\"\n"
              f"    inputs: {{{inputs}}}\n    mode: {mode}\n")
    code, records, err = _run(tmp_path, capsys, models, site="auto")
    assert code == 0, err
    torch.manual_seed(0)
    model = eval(build, {name: getattr(x_transformers, name) for name in dir(x_transformers)})  # noqa: S307 - our literal
    model.train(mode == "training")
    with flop_counter() as counter:
        out = model(**make_inputs())
        if mode == "training":
            out.sum().backward()
    record = records[0]
    assert record["complete"] is True, (record["not_followed"], [s for s in record["sites"] if not s["resolved"]])
    assert record["totals"]["flops"] == counter.get_total_flops()
    from importlib.metadata import version

    assert record["packages_read"]["x_transformers"] == version("x-transformers")


def test_transformers_vit_built_from_its_config(tmp_path, capsys):
    """ViT's patch count reads `isinstance(image_size, collections.abc.Iterable)` of an int (False).
    `num_labels` is a property of the config class, computed from `id2label`: given as a dim here."""
    transformers = pytest.importorskip("transformers")
    config = transformers.ViTConfig(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_hidden_layers=2,
                                    image_size=32, patch_size=8, num_labels=10)
    config._attn_implementation = "eager"
    config.to_json_file(str(tmp_path / "vit.config.json"))
    models = ("  vit:\n    build: \"ViTForImageClassification(config)\"\n    dims_from: vit.config.json\n"
              "    inputs: {pixel_values: \"float32 batch 3 32 32\"}\n"
              "    assume: {\"self.config._attn_implementation\": eager}\n")
    code, records, err = _run(tmp_path, capsys, models, site="auto", dims="{batch: 2, num_labels: 10}")
    assert code == 0, err
    model = transformers.ViTForImageClassification(config).eval()
    from torch.utils.flop_counter import FlopCounterMode

    with torch.no_grad(), FlopCounterMode(display=False) as counter:
        model(pixel_values=torch.randn(2, 3, 32, 32))
    record = records[0]
    # the dtype check is decided (input and weight both float32); what is left undecided is which
    # accelerator the environment has, which costs no FLOPs either way
    assert record["complete"] is True and not [u for u in record["undecided"] if "dtype" in u]
    assert record["unresolved_sites"] == 0 and record["totals"]["flops"] == counter.get_total_flops()
    assert record["packages_read"]["transformers"] == transformers.__version__


# -- bad input: one line naming file, key and reason, exit 2 -------------------------------------------------

@pytest.mark.parametrize("build, key, reason", [
    ("VisionTransformer(depth=4", "build", "invalid Python"),
    ("model = VisionTransformer(depth=4)", "build", "expected one expression, got a statement (Assign)"),
    ("import os", "build", "got a statement (Import)"),
    ("VisionTransformr(depth=4)", "build", "`VisionTransformr` resolves to nothing"),
    ("timmish.nothing_here(depth=4)", "build", "`timmish.nothing_here` resolves to nothing"),
    ("VisionTransformer", "build", "expected a call that builds the model"),
    ("VisionTransformer(**{'depth': 4})", "build", "`**mapping` is not allowed"),
    ("VisionTransformer(depth=(lambda: 4)())", "build", "Lambda is not allowed"),
    ("VisionTransformer(depth=[i for i in range(9)])", "build", "ListComp is not allowed"),
    ("VisionTransformer(" + "[" * 300 + "]" * 300 + ")", "build", "invalid Python"),
    ("VisionTransformer(depth=[" + "1, " * 500 + "])", "build", "syntax nodes"),
    ("VisionTransformer(depth=4)" + " " * 3000, "build", "characters"),
    ("LlamaForCausalLM(config)", "build", "`config` is the config read from `dims_from`"),
])
def test_a_bad_build_is_one_line_naming_file_key_and_reason(tmp_path, capsys, build, key, reason):
    models = f"  vit:\n    build: {json.dumps(build)}\n    inputs: {{x: \"float32 batch 3 32 32\"}}\n"
    code, _, err = _run(tmp_path, capsys, models)
    assert code == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err
    assert f"{tmp_path / 'tensorcost.yaml'}: models.vit.{key}: " in lines[0] and reason in lines[0], lines[0]


@pytest.mark.parametrize("entry, reason", [
    ("net.py:Net.forward", "with `build`, entry is a method name"),
    ("no_such_method", "has no method 'no_such_method'"),
])
def test_a_bad_entry_beside_build_is_refused(tmp_path, capsys, entry, reason):
    (tmp_path / "net.py").write_text(USER_MODEL.replace("from layerkit.layers import SwiGLU", "SwiGLU = nn.Identity"))
    models = f"  net:\n    build: \"Net()\"\n    entry: {entry}\n    inputs: {{x: \"float32 batch 64\"}}\n"
    code, _, err = _run(tmp_path, capsys, models)
    assert code == 2 and len(err.strip().splitlines()) == 1 and reason in err, err


def test_a_bare_method_entry_needs_build(tmp_path, capsys):
    code, _, err = _run(tmp_path, capsys, "  net:\n    entry: forward\n")
    assert code == 2 and "models.net.entry" in err and "FILE:QUALNAME" in err


def test_an_ambiguous_bare_name_is_refused_never_guessed(tmp_path, capsys):
    for name in ("a.py", "b.py"):
        (tmp_path / name).write_text("from torch import nn\n\n\nclass Net(nn.Module):\n    def forward(self, x):\n"
                                     "        return x\n")
    code, _, err = _run(tmp_path, capsys, "  net:\n    build: \"Net()\"\n    inputs: {x: \"float32 batch 8\"}\n")
    assert code == 2 and "`Net` is ambiguous: defined in a, b" in err, err


def test_build_on_the_command_line(tmp_path, capsys, monkeypatch):
    (tmp_path / "net.py").write_text(USER_MODEL)
    (tmp_path / "tensorcost.yaml").write_text(f"dims: {{batch: 2}}\nsite_packages: '{SITE}'\n")
    monkeypatch.chdir(tmp_path)
    code = main(["model", "--build", "Net(dim=48, hidden=96)", "--input", "x=float32 batch 48", "--format", "json"])
    record = json.loads(capsys.readouterr().out)["models"][0]
    assert code == 0 and record["complete"] is True and record["entry"] == "forward"
    assert record["totals"]["flops"] == 2 * 2 * (48 * 48 + 3 * 48 * 96 + 48 * 10)
    assert main(["model", "--build", "Net(", "--format", "json"]) == 2
    assert "--build: Net(: invalid Python" in capsys.readouterr().err


def test_check_holds_a_built_model_to_its_budget_at_the_built_class_method(tmp_path, capsys, monkeypatch):
    """`check` runs build entries too: TCL503 lands on the `def forward` of the class the call built."""
    (tmp_path / "net.py").write_text(USER_MODEL.replace("from layerkit.layers import SwiGLU", "SwiGLU = nn.Identity"))
    (tmp_path / "tensorcost.yaml").write_text(
        "dims: {batch: 2}\nmodels:\n  net:\n    build: \"Net(dim=32)\"\n    inputs: {x: \"float32 batch 32\"}\n"
        "    budgets: {flops: 100}\n")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "net.py"]) == 1
    out = capsys.readouterr().out
    line = USER_MODEL.splitlines().index("    def forward(self, x):") + 1
    assert f"net.py:{line}:5: TCL503" in out and "model `net`" in out, out


def test_the_name_search_reads_nothing_outside_its_roots(tmp_path, capsys):
    """A star import climbing out of the project (`from ...outside import *`) is not followed: the
    name it would bring in resolves to nothing, and the file outside is never read."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "__init__.py").write_text("class Secret:\n    pass\n")
    project = tmp_path / "project"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "__init__.py").write_text("from ...outside import *\n")
    (project / ".git").mkdir()  # the project root: tmp_path/outside lies beyond it
    code, _, err = _run(project, capsys, "  m:\n    build: \"Secret()\"\n    inputs: {x: \"float32 batch 8\"}\n",
                        site=None)
    assert code == 2 and "`Secret` resolves to nothing" in err, err


# -- a factory whose choice of class is read from the environment ------------------------------------------

CHOSEN_BY_ENVIRONMENT = '''import os

from torch import nn

_USE_WIDE = os.environ.get("NET_USE_WIDE", "false").lower() == "true"


class Net(nn.Module):
    def __init__(self, dim=16):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        return self.proj(x)


class WideNet(Net):
    def __init__(self, dim=16):
        super().__init__(dim)
        self.proj = nn.Linear(dim, 4 * dim)


def make_net(use_wide=None, **kwargs):
    if use_wide is None:
        use_wide = _USE_WIDE
    if use_wide:
        return WideNet(**kwargs)
    return Net(**kwargs)
'''


def test_a_build_whose_object_an_undecided_condition_picks_names_it(tmp_path, capsys):
    """The class is picked by an environment variable, which the run cannot read: the build is
    refused naming the condition, and `assume` decides it (then the total is exact)."""
    (tmp_path / "nets.py").write_text(CHOSEN_BY_ENVIRONMENT)
    models = "  net:\n    build: \"make_net(dim=8)\"\n    inputs: {x: \"float32 batch 8\"}\n"
    code, _, err = _run(tmp_path, capsys, models, site=None)
    assert code == 2 and "what it returns depends on `use_wide`, undecided: `assume` gives a value" in err
    code, records, err = _run(tmp_path, capsys, models + "    assume: {use_wide: false}\n", site=None)
    assert code == 0, err
    assert records[0]["complete"] is True and records[0]["totals"]["flops"] == 2 * 2 * 8 * 8

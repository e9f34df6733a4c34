"""predictor.layers: conv layers of real torch modules (meta device), the CLI, and the catalog
regenerated from torchvision.  Skipped where torch is not installed (CI), except the message that
names the extra to install."""
from __future__ import annotations

import builtins
from pathlib import Path

import pytest

from predictor import layers as L
from predictor.features import ConvProblem
from predictor.shapes import CATALOG_DIR, read_layers_csv
from tests.script_module import script_module



def test_missing_torch_names_the_extra(monkeypatch, tmp_path: Path, capsys) -> None:
    real_import = builtins.__import__

    def no_torch(name, *args, **kw):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")
        return real_import(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    assert L.main(["resnet18", "--out", str(tmp_path / "x.csv")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == "error: predictor.layers needs PyTorch: pip install 'cutlass-conv-predictor[layers]'"
    with pytest.raises(ImportError, match=r"\[layers\]"):
        L.conv_layers(object(), (1, 3, 8, 8))


def test_bad_input_arguments() -> None:
    with pytest.raises(SystemExit):
        L.build_parser().parse_args(["resnet18", "--input", "224x", "--out", "x.csv"])
    assert L.parse_input("800x1088") == (800, 1088) and L.parse_input("224") == (224, 224)


# --------------------------------------------------------------------------- with torch
def _net():
    torch = pytest.importorskip("torch")
    nn = torch.nn

    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.a = nn.Conv2d(8, 16, 3, padding=1)                      # plain 3x3
            self.b = nn.Conv2d(16, 16, 3, padding=1, groups=16)          # depthwise: left out
            self.c = nn.Conv2d(16, 32, 3, padding=1, groups=4)           # grouped: left out
            self.d = nn.Conv2d(16, 24, 5, padding="same", dilation=2)    # 'same', dilated
            self.e = nn.Conv2d(24, 24, 4, padding="same")                # even 'same': asymmetric, left out
            self.f = nn.Conv2d(24, 40, (1, 7), padding=(0, 3))           # pad differs along H and W: left out
            self.g = nn.Conv2d(24, 40, (3, 5), padding=2, stride=2)      # R != S, one pad: kept
            self.h = nn.Conv2d(24, 32, 3, padding=1, padding_mode="reflect")  # padded input, pad 0
            self.i = nn.Conv2d(24, 32, 3, stride=(1, 2))                 # stride differs: left out
            self.j = nn.Conv2d(24, 48, 2, stride=2, padding="valid")     # patch embedding

        def forward(self, x):
            x = self.a(x)
            x = self.b(x)
            self.c(x)
            x = self.d(x)
            self.e(x)
            self.f(x)
            self.g(x)
            self.h(x)
            self.i(x)
            self.a(torch.zeros_like(x[:, :8]))  # a module called twice
            return self.j(x)

    return torch, Net()


def test_conv_layers_records_what_runs_and_reports_the_rest() -> None:
    torch, net = _net()
    got = L.conv_layers(net, (2, 8, 20, 30))
    assert [g.name for g in got] == list("abcdefghiaj")
    probs = {g.name: g.problem for g in got}
    assert probs["a"] == ConvProblem(2, 8, 20, 30, 16, 3, 3, 1, 1, 1)
    assert probs["d"] == ConvProblem(2, 16, 20, 30, 24, 5, 5, 1, 4, 2)
    assert probs["g"] == ConvProblem(2, 24, 20, 30, 40, 3, 5, 2, 2, 1)
    assert probs["h"] == ConvProblem(2, 24, 22, 32, 32, 3, 3, 1, 0, 1)
    assert probs["j"] == ConvProblem(2, 24, 20, 30, 48, 2, 2, 2, 0, 1)
    why = {g.name: g.skipped for g in got if g.problem is None}
    assert set(why) == set("bcefi")
    assert why["b"].startswith("depthwise") and why["c"].startswith("grouped")
    assert "asymmetric" in why["e"] and "differs along H and W" in why["f"] and "stride 1x2" in why["i"]
    # each recorded problem's output size is the one torch computed (on real tensors here)
    real = L.conv_layers(net, (2, 8, 20, 30), device="cpu")
    assert [g.problem for g in real] == [g.problem for g in got]
    assert L.skipped_summary(got) == ("1 asymmetric 'same' padding (1, 2, 1, 2) of an even kernel, 1 depthwise, "
                                      "1 grouped, 1 padding 0x3 differs along H and W, 1 stride 1x2 differs along "
                                      "H and W")
    # distinct: the twice-called layer counts twice
    d = L.distinct(got)
    assert [(n, c) for p, n, c in d if n == "a"] == [("a", 2)] and len(d) == 5
    assert next(iter(net.parameters())).device.type == "cpu", "the module itself is not moved"


def test_conv_layers_rejects_bad_input_shape() -> None:
    _, net = _net()
    with pytest.raises(ValueError, match="input_shape must be 4 positive sizes"):
        L.conv_layers(net, (8, 20, 30))


def test_cli_writes_a_layers_csv_the_collector_reads(tmp_path: Path) -> None:
    pytest.importorskip("torchvision")
    out = tmp_path / "rn.csv"
    assert L.main(["torchvision:resnet18", "resnet50", "--batch", "1", "8", "--out", str(out)]) == 0
    text = out.read_text().splitlines()
    assert text[0].startswith("# generated by python -m predictor.layers torchvision:resnet18 resnet50")
    assert "do not edit; torch " in text[0]
    rows = read_layers_csv(out)
    assert {s.source for s in rows} == {"net:resnet18", "net:resnet50"}
    assert len({s.problem for s in rows}) == len(rows)
    # the same layers as the catalog's (batches 1 and 8), a layer of both networks named once
    cat = {s.problem for name in ("resnet18", "resnet50") for s in read_layers_csv(CATALOG_DIR / f"{name}.csv")
           if s.problem.N in (1, 8)}
    assert {s.problem for s in rows} == cat


def test_own_module_by_factory(tmp_path: Path, monkeypatch) -> None:
    torch, _ = _net()
    mod = tmp_path / "mynets.py"
    mod.write_text("import torch\n\ndef tiny():\n    return torch.nn.Sequential(torch.nn.Conv2d(3, 32, 3, 2, 1), "
                   "torch.nn.Conv2d(32, 64, 1))\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    out = tmp_path / "t.csv"
    assert L.main(["mynets:tiny", "--batch", "4", "--input", "64x96", "--out", str(out)]) == 0
    assert [s.problem for s in read_layers_csv(out)] == [ConvProblem(4, 3, 64, 96, 32, 3, 3, 2, 1, 1),
                                                         ConvProblem(4, 32, 32, 48, 64, 1, 1, 1, 0, 1)]
    assert L.main(["mynets:nothing", "--out", str(out)]) == 2


def _catalog_script():
    """scripts/make_network_catalog.py as a module (it imports torch only when it generates)."""
    return script_module("scripts/make_network_catalog.py")


@pytest.mark.parametrize("name", ["resnet50", "fasterrcnn_resnet50_fpn", "deeplabv3_resnet50", "inception_v3",
                                  "unet_skip", "yolov8m_csp", "darknet_yolo"])
def test_catalog_regenerates_byte_for_byte(name: str) -> None:
    """The committed file is what the script writes in this environment (same torch/torchvision
    as its header says; other versions may change module names, not shapes)."""
    pytest.importorskip("torchvision")
    cat = _catalog_script()
    net = next(n for n in cat.CATALOG if n.name == name)
    committed = (CATALOG_DIR / f"{name}.csv").read_text()
    files = cat.render((net,))
    if cat.header(L.versions())[0] != committed.splitlines()[0][2:]:
        pytest.skip(f"catalog made with other versions than {L.versions()}")
    assert files[f"{name}.csv"] == committed


def test_timm_model() -> None:
    pytest.importorskip("timm")
    name, model, fwd = L.load_model("timm:resnet18")
    rows, first = L.network_rows(name, model, [2], 3, (64, 64), forward=fwd)
    assert rows and all(r["N"] == 2 and r["network"] == "resnet18" for r in rows)

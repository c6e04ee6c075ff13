"""Embedded model files: reassembly from part packages, sha256 checks, reuse, custom paths."""

from __future__ import annotations

import hashlib
import importlib
from pathlib import Path

import pytest

from bddgen.errors import BackendUnavailableError, ConfigError
from bddgen.lm import model_files
from bddgen.lm.model_files import MODELS, EmbeddedModel, resolve_model_path

PARTS = [b"GGUF" + bytes(range(256)) * 40, b"middle" * 3000, b"the end"]


@pytest.fixture
def fake_parts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Three installed-looking packages, each holding one data/partNN.bin, and BDDGEN_HOME in tmp."""
    site = tmp_path / "site"
    files = []
    for index, content in enumerate(PARTS, start=1):
        package = site / f"bddgen_fake_part{index}"
        (package / "data").mkdir(parents=True)
        (package / "__init__.py").write_text("raise ImportError('part packages must not be imported')\n")
        files.append(package / "data" / f"part{index:02d}.bin")
        files[-1].write_bytes(content)
    monkeypatch.syspath_prepend(str(site))
    importlib.invalidate_caches()
    monkeypatch.setenv("BDDGEN_HOME", str(tmp_path / "home"))
    return files


def register(monkeypatch: pytest.MonkeyPatch, sha256: str, packages: int = 3) -> EmbeddedModel:
    spec = EmbeddedModel(
        name="fake-model",
        description="a fake model",
        packages=tuple(f"bddgen_fake_part{i}" for i in range(1, packages + 1)),
        sha256=sha256,
        extra="model-fake",
    )
    monkeypatch.setitem(MODELS, spec.name, spec)
    return spec


def models_dir(tmp_path: Path) -> Path:
    return tmp_path / "home" / "models"


def test_parts_are_joined_in_order_and_verified(
    fake_parts: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register(monkeypatch, hashlib.sha256(b"".join(PARTS)).hexdigest())
    path = resolve_model_path("fake-model")
    assert path == models_dir(tmp_path) / "fake-model.gguf"
    assert path.read_bytes() == b"".join(PARTS)
    assert sorted(p.name for p in models_dir(tmp_path).iterdir()) == ["fake-model.gguf", "fake-model.gguf.verified"]


def test_the_assembled_file_is_reused_without_the_packages(
    fake_parts: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register(monkeypatch, hashlib.sha256(b"".join(PARTS)).hexdigest())
    path = resolve_model_path("fake-model")
    for part in fake_parts:
        part.unlink()
    assert resolve_model_path("fake-model") == path

    with path.open("ab") as grown:  # a changed file is not trusted: it is rebuilt from the parts
        grown.write(b"x")
    with pytest.raises(BackendUnavailableError, match="missing or broken"):
        resolve_model_path("fake-model")


def test_a_hash_mismatch_is_refused_and_leaves_nothing(
    fake_parts: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    register(monkeypatch, "0" * 64)
    with pytest.raises(BackendUnavailableError) as caught:
        resolve_model_path("fake-model")
    message = str(caught.value)
    assert "sha256" in message and "0" * 64 in message and hashlib.sha256(b"".join(PARTS)).hexdigest() in message
    assert 'pip install --force-reinstall "bddgen[local,model-fake]"' in message
    assert list(models_dir(tmp_path).iterdir()) == []


def test_missing_packages_name_the_pip_command(fake_parts: list[Path], monkeypatch: pytest.MonkeyPatch) -> None:
    register(monkeypatch, "0" * 64, packages=5)
    with pytest.raises(BackendUnavailableError) as caught:
        resolve_model_path("fake-model")
    assert "2 missing" in str(caught.value) and "bddgen-fake-part4" in str(caught.value)
    assert 'pip install "bddgen[local,model-fake]"' in str(caught.value)


def test_the_shipped_registry_names_the_documented_extras() -> None:
    assert MODELS["qwen2.5-coder-1.5b"].install_command == 'pip install "bddgen[local,model-1p5b]"'
    assert len(MODELS["qwen2.5-coder-1.5b"].packages) == 22 and len(MODELS["qwen2.5-coder-0.5b"].packages) == 6


def test_any_gguf_path_can_be_configured(tmp_path: Path) -> None:
    gguf = tmp_path / "my model.gguf"
    gguf.write_bytes(b"GGUF")
    assert resolve_model_path(str(gguf)) == gguf.resolve()
    with pytest.raises(BackendUnavailableError, match="no GGUF file at"):
        resolve_model_path(str(tmp_path / "missing.gguf"))
    with pytest.raises(ConfigError, match="qwen2.5-coder-1.5b"):
        resolve_model_path("qwen-huge")


def test_home_defaults_to_the_user_cache(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("BDDGEN_HOME", raising=False)
    assert model_files.bddgen_home() == Path.home() / ".cache" / "bddgen"

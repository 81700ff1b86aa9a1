"""Settings: declared once, read from papersift.toml and PAPERSIFT_* variables, checked."""

from __future__ import annotations

from pathlib import Path

import pytest

from papersift.settings import SETTINGS, SettingsError, load_settings


def test_every_setting_has_a_type_a_default_and_help() -> None:
    names = [s.name for s in SETTINGS]
    assert len(names) == len(set(names))
    for setting in SETTINGS:
        assert setting.help and isinstance(setting.default, setting.type)


def test_precedence_default_then_file_then_environment(tmp_path: Path) -> None:
    config = tmp_path / "papersift.toml"
    config.write_text('page_size = 50\nsite_title = "From file"\n', encoding="utf-8")
    env = {"PAPERSIFT_PAGE_SIZE": "75"}
    settings = load_settings(environ=env, config=config)
    assert settings.page_size == 75 and settings.site_title == "From file"
    assert settings.request_delay == 3.0


def test_data_dir_comes_from_one_variable(tmp_path: Path) -> None:
    settings = load_settings(environ={"PAPERSIFT_DATA_DIR": str(tmp_path / "d")}, config=tmp_path / "x")
    assert settings.paths.database == tmp_path / "d" / "papersift.db" and (tmp_path / "d").is_dir()


@pytest.mark.parametrize(("environ", "toml", "message"), [
    ({"PAPERSIFT_PAGE_SIZE": "many"}, "", "PAPERSIFT_PAGE_SIZE"),
    ({}, "no_such_setting = 1\n", "unknown setting"),
    ({}, "page_size = [", "papersift.toml"),
    ({"PAPERSIFT_EMBED_QUANTIZE": "perhaps"}, "", "bool"),
])
def test_bad_values_are_clear_errors(tmp_path: Path, environ: dict[str, str], toml: str,
                                     message: str) -> None:
    config = tmp_path / "papersift.toml"
    config.write_text(toml, encoding="utf-8")
    with pytest.raises(SettingsError, match=message):
        load_settings(environ=environ, config=config)

"""Every file dialog opens in the folder last used for its kind (models opened and saved, real model
folders), as the figure export's does, and remembers it in the settings: File ▸ Open model, Open model
folder and Save model as, driven through their menu commands with the dialogs answered."""

from pathlib import Path

import pytest
from PySide6 import QtWidgets

from attention_explorer import engine
from attention_explorer.engine.model import model_to_json

BERT = str(Path(__file__).parents[1] / "engine" / "pretrained" / "data" / "tiny-bert")


@pytest.fixture
def dialogs(monkeypatch):
    """Answer the file dialogs with the next of `answers[kind]`; record the folder each opened in."""
    opened: dict[str, list[str]] = {"open": [], "save": [], "folder": []}
    answers: dict[str, list[str]] = {"open": [], "save": [], "folder": []}

    def answer(kind, start):
        opened[kind].append(start)
        return answers[kind].pop(0)

    dialog = QtWidgets.QFileDialog
    monkeypatch.setattr(dialog, "getOpenFileName", lambda _p, _t, start, *_a: (answer("open", start), ""))
    monkeypatch.setattr(dialog, "getSaveFileName", lambda _p, _t, start, *_a: (answer("save", start), ""))
    monkeypatch.setattr(dialog, "getExistingDirectory", lambda _p, _t, start, *_a: answer("folder", start))
    return opened, answers


def a_model_file(folder: Path) -> Path:
    folder.mkdir()
    path = folder / "cats.json"
    path.write_text(model_to_json(engine.load_builtin("cats-chase-mice")), encoding="utf-8")
    return path


def test_open_and_save_model_start_where_models_were_last_opened_or_saved(make_window, dialogs, tmp_path):
    opened, answers = dialogs
    window = make_window()
    mine = a_model_file(tmp_path / "models")
    answers["open"] += [str(mine), ""]
    window.open_model_dialog()
    assert window.controller.model.name == "cats-chase-mice"
    window.open_model_dialog()  # cancelled
    assert Path(opened["open"][1]) == mine.parent
    assert Path(window.settings.value("export/folder/model")) == mine.parent

    window.open_model("cat-sat-on-mat")  # a built-in model: it has no file of its own to start from
    answers["save"] += [str(tmp_path / "saved" / "copy")]
    (tmp_path / "saved").mkdir()
    window.model_editor.save_as()
    assert Path(opened["save"][0]) == mine.parent / "cat-sat-on-mat.json"  # the models' folder, its name
    assert (tmp_path / "saved" / "copy.json").is_file()
    answers["open"] += [""]
    window.open_model_dialog()
    assert Path(opened["open"][2]) == tmp_path / "saved"  # the save moved the models' folder


def test_open_model_folder_starts_beside_the_folder_last_opened(make_window, dialogs):
    pytest.importorskip("tokenizers")
    opened, answers = dialogs
    window = make_window()
    answers["folder"] += [BERT, ""]
    window.pretrained.open_folder_dialog()
    assert window.controller.is_real
    window.pretrained.open_folder_dialog()  # cancelled
    assert Path(opened["folder"][1]) == Path(BERT).parent  # where the model folders are, to pick another
    assert Path(window.settings.value("export/folder/model-folder")) == Path(BERT).parent


def test_a_chosen_file_that_is_a_loop_of_links_gets_one_message_and_its_folder_remembered(make_window, dialogs,
                                                                                            tmp_path, monkeypatch):
    """Remembering the chosen file's folder followed its links, which raise for a loop: the Open model
    dialog answered with one ended in the crash dialog (offscreen walk, seed 97). Now its folder is
    remembered as chosen, and the model is refused with one message, a folder that is a loop too (it
    was "no built-in model or file called …")."""
    opened, answers = dialogs
    shown = []
    monkeypatch.setattr(QtWidgets.QMessageBox, "warning", lambda _parent, _title, text: shown.append(text))
    window = make_window()
    folder = tmp_path / "links"
    folder.mkdir()
    (folder / "model.gguf.other").symlink_to("model.gguf")
    (folder / "model.gguf").symlink_to("model.gguf.other")
    answers["open"] += [str(folder / "model.gguf"), ""]
    window.open_model_dialog()
    assert len(shown) == 1 and "loop" in shown[0] and "unchanged" in shown[0]
    assert window.controller.model.name == "cat-sat-on-mat"
    window.open_model_dialog()  # cancelled
    assert Path(opened["open"][1]) == folder
    (folder / "model-folder.other").symlink_to("model-folder")  # File ▸ Open model folder…: named for what it is
    (folder / "model-folder").symlink_to("model-folder.other")
    answers["folder"] += [str(folder / "model-folder")]
    window.pretrained.open_folder_dialog()
    assert len(shown) == 2 and "model-folder: is a symbolic link that leads round in a loop" in shown[1]
    assert window.controller.model.name == "cat-sat-on-mat"

"""Reading a model file never hangs, never runs out of memory and never crashes: every file the user
can name gives the model or one clear ModelError naming the file."""

import json
import os
import socket
import sys
import threading

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from attention_explorer import engine
from attention_explorer.engine import ModelError
from attention_explorer.engine.limits import MAX_FILE_BYTES, MAX_JSON_DEPTH
from attention_explorer.engine.safe_read import parse_json, read_user_text

posix_only = pytest.mark.skipif(sys.platform == "win32", reason="FIFOs, sockets and /dev/zero are POSIX")


def _cats_text() -> str:
    return json.dumps(engine.model_to_dict(engine.load_builtin("cats-chase-mice")))


def _refusal(path) -> str:
    with pytest.raises(ModelError) as info:
        engine.load_model(path)
    return str(info.value)


@posix_only
def test_a_fifo_is_refused_at_once_without_waiting_for_a_writer(tmp_path):
    fifo = tmp_path / "model.json"
    os.mkfifo(fifo)
    done = []
    worker = threading.Thread(target=lambda: done.append(_refusal(fifo)), daemon=True)
    worker.start()
    worker.join(timeout=20)  # a generous bound on a hang, not a timing measurement
    assert done == [f"{fifo}: is not a regular file (a device, pipe or socket); choose a model file"]


@posix_only
def test_a_device_is_refused_without_reading_it():
    assert _refusal("/dev/zero") == "/dev/zero: is not a regular file (a device, pipe or socket); choose a model file"


@posix_only
def test_a_socket_is_refused(tmp_path):
    path = tmp_path / "s.json"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        assert _refusal(path) == f"{path}: is not a regular file (a device, pipe or socket); choose a model file"
    finally:
        server.close()


def test_a_folder_and_a_missing_file_are_refused(tmp_path):
    assert _refusal(tmp_path) == f"{tmp_path}: is a folder; choose a model file inside it"
    assert _refusal(tmp_path / "absent.json") == f"{tmp_path / 'absent.json'}: no such file"


def test_a_file_over_the_size_limit_is_refused_before_it_is_read(tmp_path):
    path = tmp_path / "huge.json"
    with open(path, "wb") as handle:
        handle.truncate(MAX_FILE_BYTES + 1)  # sparse: costs no disk
    assert MAX_FILE_BYTES == 16 * 2 ** 20
    assert _refusal(path) == "huge.json: is 16 MB; a model file may be at most 16 MB, so this is not one"
    os.truncate(path, 20 * 2 ** 20 + 2 ** 19)
    assert _refusal(path) == "huge.json: is 20.5 MB; a model file may be at most 16 MB, so this is not one"


@pytest.mark.parametrize("text", ["[" * 1500 + "]" * 1500, '{"notes": ' + "[" * 1500 + "1" + "]" * 1500 + "}"])
def test_deep_nesting_is_a_clear_error_not_a_recursion_error(tmp_path, text):
    path = tmp_path / "deep.json"
    path.write_text(text)
    assert _refusal(path) == "deep.json: nested more than 64 levels deep (line 1); a model file needs only a few levels"


def test_brackets_inside_texts_do_not_count_as_nesting():
    text = json.dumps({"notes": "[" * 1000, "more": ["{\"[" * 100]})
    assert parse_json(text, "m.json", error=ModelError)["notes"] == "[" * 1000
    assert MAX_JSON_DEPTH == 64


def test_nesting_is_reported_on_its_line():
    text = "{\n\"a\":\n" + "[" * 65 + "]" * 65 + "}"
    with pytest.raises(ModelError, match=r"^m.json: nested more than 64 levels deep \(line 3\)"):
        parse_json(text, "m.json", error=ModelError)


def test_a_utf8_byte_order_mark_is_accepted(tmp_path):
    path = tmp_path / "bom.json"
    path.write_bytes(b"\xef\xbb\xbf" + _cats_text().encode())
    assert engine.load_model(path).name == "cats-chase-mice"


def test_bytes_that_are_not_utf8_are_named_with_their_offset(tmp_path):
    path = tmp_path / "latin.json"
    path.write_bytes(b'{"name": "caf\xe9"}')
    assert _refusal(path) == "latin.json: not UTF-8 text (byte 0xe9 at offset 13); save the model file as UTF-8"


def test_the_reader_raises_the_error_type_its_caller_asks_for(tmp_path):
    with pytest.raises(engine.EngineError, match="no such file"):
        read_user_text(tmp_path / "absent.txt", "text file")


def test_a_name_no_file_system_accepts_is_refused():
    assert _refusal("a\0b.json") == "'a\\x00b.json': not a usable file name; choose a model file"


_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=5), inner, max_size=4),
    max_leaves=20)


@settings(max_examples=200, deadline=None)
@given(_json_values)
def test_standard_json_reads_back_as_it_was_written(value):
    assert parse_json(json.dumps(value), "v.json", error=ModelError) == value


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.binary(max_size=200) | st.text(alphabet='{}[]",:0123456789.-eE ntrufalsNI\\', max_size=200).map(str.encode))
def test_any_bytes_give_a_model_or_one_model_error(tmp_path, data):
    path = tmp_path / "fuzz.json"
    path.write_bytes(data)
    try:
        engine.load_model(path)
    except ModelError as exc:
        assert "\n" not in str(exc) and str(exc).startswith("fuzz.json: ")

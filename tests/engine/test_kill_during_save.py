"""kill -9 at any moment of a save leaves the old or the new file whole, hard links included, and the
temporary files of killed saves do not pile up.

A real process saves in a loop, alternating two contents of different lengths made of different
bytes (so a torn file equals neither), and is killed with SIGKILL after a random delay, again and
again. A save into a hard-linked file may still be finishing in its copying process when the writer
is gone; it holds the file's lock until done, so the check takes a shared lock before reading.
"""

import fcntl
import os
import random
import signal
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="kill -9 and flock are POSIX")

OLD = b"a" * (3 << 20)
NEW = b"b" * (2 << 20)

WRITERS = {
    "atomic_file": """
        from attention_explorer.engine.atomic_write import write_bytes_atomically
        def save(content):
            write_bytes_atomically(TARGET, content)
    """,
    "settings": """
        from attention_explorer.settings_store import SettingsStore
        store = SettingsStore(TARGET)
        def save(content):
            store.setValue("model/sentence", content.decode())
            assert store.sync()
    """,
}
LOOP = """
    import sys
    print("ready", flush=True)
    for i in range(10 ** 9):
        save(CONTENTS[i % 2])
"""


def whole_contents(kind: str, folder) -> tuple[bytes, bytes]:
    """What the file holds after a complete save of each of the two contents."""
    if kind == "atomic_file":
        return OLD, NEW
    from attention_explorer.settings_store import SettingsStore

    versions = []
    for number, content in enumerate((OLD, NEW)):
        store = SettingsStore(folder / f"expected-{number}.json")
        store.setValue("model/sentence", content.decode())
        assert store.sync()
        versions.append(store.path.read_bytes())
        store.path.unlink()
    return versions[0], versions[1]


def read_when_settled(path) -> bytes:
    with open(path, "rb") as handle:
        fcntl.flock(handle, fcntl.LOCK_SH)  # waits for a copy into a hard-linked file to finish
        return handle.read()


def hidden_files(folder) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


@pytest.mark.parametrize(("kind", "hard_link", "kills"), [
    pytest.param("atomic_file", True, 24, id="export or model file with a second hard link"),
    pytest.param("atomic_file", False, 12, id="export or model file"),
    pytest.param("settings", True, 12, id="settings file with a second hard link"),
])
def test_kill_9_while_saving_leaves_the_old_or_the_new_file_whole(tmp_path, kind, hard_link, kills):
    old, new = whole_contents(kind, tmp_path)
    target = tmp_path / "saved.json"
    target.write_bytes(old)
    second_name = tmp_path / "second-name.json"
    if hard_link:
        os.link(target, second_name)
    script = (f"TARGET = {str(target)!r}\nCONTENTS = ({OLD[:1]!r} * {len(OLD)}, {NEW[:1]!r} * {len(NEW)})\n"
              + textwrap.dedent(WRITERS[kind]) + textwrap.dedent(LOOP))
    rng = random.Random(16)
    seen = {"old": 0, "new": 0}
    for kill in range(kills):
        writer = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE)
        assert writer.stdout.readline() == b"ready\n"
        try:
            writer.wait(timeout=rng.uniform(0.0, 0.15))
        except subprocess.TimeoutExpired:
            writer.send_signal(signal.SIGKILL)
        assert writer.wait() == -signal.SIGKILL, f"kill {kill + 1}: the writer stopped on its own"
        writer.stdout.close()
        content = read_when_settled(target)
        assert content in (old, new), (f"kill {kill + 1}: the file is torn ({len(content):,} bytes, "
                                       f"{content[:1]!r}…{content[-1:]!r})")
        seen["old" if content == old else "new"] += 1
        if hard_link:
            assert read_when_settled(second_name) == content, f"kill {kill + 1}: the other name differs"
            assert target.stat().st_nlink == 2
        assert len(hidden_files(tmp_path)) <= 1, f"kill {kill + 1}: temporaries pile up: {hidden_files(tmp_path)}"
    assert seen["old"] and seen["new"], f"the kills all fell on one side of the saves: {seen}"
    subprocess.run([sys.executable, "-c", script.replace("10 ** 9", "2")], check=True, capture_output=True)
    assert hidden_files(tmp_path) == [], "the next save removes what a killed one left"

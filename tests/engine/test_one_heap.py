"""Once one_heap_for_every_thread has run, a worker thread allocates from the main thread's heap: a heap of
its own kept what it freed out of the window's reach (MiniLM at 512 tokens: 10 MiB more at the peak)."""

import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's heaps")

PROGRAM = textwrap.dedent("""
    import ctypes, sys, threading
    from attention_explorer.engine import memory

    libc = ctypes.CDLL(None)
    if not hasattr(libc, "malloc_info"):
        print("not glibc")
        sys.exit()
    if sys.argv[2] == "one heap":
        memory.one_heap_for_every_thread()
    libc.malloc.restype = libc.fopen.restype = ctypes.c_void_p

    def allocate():  # a worker's first allocation
        libc.free(ctypes.c_void_p(libc.malloc(1000)))

    worker = threading.Thread(target=allocate)
    worker.start()
    worker.join()
    report = libc.fopen(sys.argv[1].encode(), b"w")
    libc.malloc_info(0, ctypes.c_void_p(report))
    libc.fclose(ctypes.c_void_p(report))
    print(open(sys.argv[1]).read().count("<heap nr="))
""")


def heaps(tmp_path, how: str) -> str:
    report = tmp_path / f"{how}.xml"
    out = subprocess.run([sys.executable, "-c", PROGRAM, str(report), how], capture_output=True, text=True,
                         check=True)
    return out.stdout.strip()


def test_a_worker_allocates_from_the_main_thread_s_heap(tmp_path):
    one = heaps(tmp_path, "one heap")
    if one == "not glibc":
        pytest.skip("not glibc")
    assert one == "1"
    assert heaps(tmp_path, "as glibc does") == "2"  # the worker's own heap, without it

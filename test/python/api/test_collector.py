"""The cyclic garbage collector is paused while a program compiles (xlac.collector)."""

import gc
import threading

import numpy as np

import xlac
from xlac.collector import collector_paused
from xlac.targets import get_target

ADD = ("func.func public @main(%a: tensor<4xf32>) -> tensor<4xf32> {\n"
       "  %0 = stablehlo.add %a, %a : tensor<4xf32>\n  return %0 : tensor<4xf32>\n}\n")


def test_a_compile_runs_with_the_collector_off_and_turns_it_back_on(monkeypatch):
    target = get_target("cpu")
    seen = []
    compile_program = type(target).compile

    def spy(self, *args, **kwargs):
        seen.append(gc.isenabled())
        return compile_program(self, *args, **kwargs)
    monkeypatch.setattr(type(target), "compile", spy)
    assert gc.isenabled()
    exe = xlac.compile(ADD, cache=False, cpu="x86-64-v3")
    assert seen == [False]
    assert gc.isenabled()
    np.testing.assert_array_equal(exe.run(np.ones(4, np.float32))[0], np.full(4, 2, np.float32))


def test_a_failed_compile_turns_it_back_on_too():
    try:
        xlac.compile("func.func public @main( {", cache=False, cpu="x86-64-v3")
    except xlac.CompileError:
        pass
    assert gc.isenabled()


def test_nested_pauses_turn_it_on_only_at_the_outermost_end():
    with collector_paused():
        with collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_collector_the_caller_turned_off_stays_off():
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_pauses_in_two_threads_leave_it_on():
    inside, release = threading.Event(), threading.Event()

    def other():
        with collector_paused():
            inside.set()
            release.wait(5)
    thread = threading.Thread(target=other)
    thread.start()
    inside.wait(5)
    with collector_paused():
        release.set()
        thread.join(5)
        assert not gc.isenabled()        # the other thread's ended, this one's still on
    assert gc.isenabled()

"""The first-launch tour: shown once on a first launch, dismissable, reopened from Help."""

from PySide6 import QtCore, QtWidgets
from PySide6.QtTest import QTest

from attention_explorer import engine
from attention_explorer.app import MainWindow
from attention_explorer.controller import Controller


def open_window(qtbot, settings) -> MainWindow:
    window = MainWindow(Controller(engine.load_builtin("cat-sat-on-mat")), settings)
    qtbot.addWidget(window)
    window.resize(1280, 720)
    window.show()
    qtbot.waitExposed(window)
    qtbot.waitUntil(lambda: window.tour is not None or not window._tour_pending, timeout=2000)
    QtWidgets.QApplication.processEvents()
    return window


def fresh_settings(tmp_path) -> QtCore.QSettings:
    return QtCore.QSettings(str(tmp_path / "first.ini"), QtCore.QSettings.Format.IniFormat)


def test_a_first_launch_shows_the_tour_once_and_it_walks_through_its_stops(qtbot, tmp_path):
    settings = fresh_settings(tmp_path)
    window = open_window(qtbot, settings)
    tour = window.tour
    assert tour is not None and tour.is_running()
    assert tour.title.text() == "Type a sentence" and tour.counter.text() == "1 of 4"
    box = window.sentence_box
    assert tour.ring.isVisible() and tour.ring.geometry().contains(box.mapTo(window, box.rect().center()))
    assert window.rect().contains(tour.geometry()), "the callout lies inside the window"
    titles = [tour.title.text()]
    for _ in range(3):
        tour.next_button.click()
        titles.append(tour.title.text())
        assert window.rect().contains(tour.geometry())
    assert titles == ["Type a sentence", "Hover a word", "Play the steps", "Export"]
    assert tour.next_button.text() == "Done"
    tour.next_button.click()
    assert not tour.is_running() and not tour.ring.isVisible()
    window.close()

    again = open_window(qtbot, settings)  # the second launch: no tour
    assert again.tour is None


def test_the_tour_can_be_skipped_with_esc_and_reopened_from_help(qtbot, tmp_path):
    window = open_window(qtbot, fresh_settings(tmp_path))
    tour = window.tour
    QTest.keyClick(tour.next_button, QtCore.Qt.Key.Key_Escape)
    assert not tour.is_running()
    window.tour_action.trigger()
    assert tour.is_running() and tour.current() == 0


def test_a_returning_user_sees_no_tour(make_window):
    window = make_window()
    QtWidgets.QApplication.processEvents()
    assert window.tour is None

"""The one colour module: WCAG luminance and contrast against published values, blending, pulling to a contrast."""

import pytest
from PySide6.QtGui import QColor, QPalette

from studio.look.colours import MIN_CONTRAST, blend, contrast_ratio, ensure_contrast, is_dark, relative_luminance


@pytest.mark.parametrize(
    ("a", "b", "ratio"),
    [
        ("#000000", "#ffffff", 21.0),
        ("#ffffff", "#ffffff", 1.0),
        ("#767676", "#ffffff", 4.54),  # the lightest grey that passes AA on white
        ("#777777", "#ffffff", 4.48),  # one step lighter fails it
        ("#ff0000", "#ffffff", 4.0),
        ("#0000ff", "#ffffff", 8.59),
    ],
)
def test_contrast_ratio_matches_the_published_wcag_figures(a: str, b: str, ratio: float) -> None:
    assert contrast_ratio(QColor(a), QColor(b)) == pytest.approx(ratio, abs=0.01)
    assert contrast_ratio(QColor(b), QColor(a)) == pytest.approx(ratio, abs=0.01)  # order does not matter


def test_relative_luminance_spans_zero_to_one_with_the_srgb_weights() -> None:
    assert relative_luminance(QColor("#000000")) == 0.0
    assert relative_luminance(QColor("#ffffff")) == pytest.approx(1.0)
    assert relative_luminance(QColor("#00ff00")) == pytest.approx(0.7152)


def test_blend_moves_part_of_the_way_and_clamps_the_amount() -> None:
    black, white = QColor("#000000"), QColor("#ffffff")
    assert blend(black, white, amount=0.5).name() == "#808080"
    assert blend(black, white, amount=1.2).name() == "#ffffff"
    assert blend(black, white, amount=-1).name() == "#000000"


def test_ensure_contrast_stops_at_the_first_step_that_reaches_the_ratio_against_every_background() -> None:
    grey, white, black = QColor("#999999"), QColor("#ffffff"), QColor("#000000")
    pulled = ensure_contrast(grey, (white,), toward=black, ratio=MIN_CONTRAST)
    assert contrast_ratio(pulled, white) >= MIN_CONTRAST
    step = next(step for step in range(21) if blend(grey, black, amount=step / 20) == pulled)
    assert step > 0 and contrast_ratio(blend(grey, black, amount=(step - 1) / 20), white) < MIN_CONTRAST
    # Against black and white at once no grey reaches 10:1: the target itself is the answer.
    assert ensure_contrast(grey, (white, black), toward=black, ratio=10).name() == "#000000"


def test_a_palette_is_dark_when_its_base_is_darker_than_its_text() -> None:
    palette = QPalette()
    palette.setColor(QPalette.ColorRole.Base, QColor("#1e1e1e"))
    palette.setColor(QPalette.ColorRole.Text, QColor("#e6e6e6"))
    assert is_dark(palette)
    palette.setColor(QPalette.ColorRole.Base, QColor("#ffffff"))
    palette.setColor(QPalette.ColorRole.Text, QColor("#1f2328"))
    assert not is_dark(palette)

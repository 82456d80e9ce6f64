"""The Python tour (examples/tour.py, the README's Python main job) runs end to end, and its
two models learn: the final held-out accuracy of each beats chance by a wide margin."""

import pathlib
import re
import runpy

TOUR = pathlib.Path(__file__).resolve().parents[3] / "examples" / "tour.py"


def test_tour_runs_and_both_models_learn(capsys):
    runpy.run_path(str(TOUR), run_name="__main__")
    out = capsys.readouterr().out
    finals = re.findall(r"^  held-out accuracy ([0-9.]+) \(chance ([0-9.]+)\)", out, re.M)
    assert len(finals) == 2, out[-2000:]
    for acc, chance in finals:
        assert float(acc) > float(chance) + 0.2, (acc, chance)
    assert "w.grad is row_sparse" in out

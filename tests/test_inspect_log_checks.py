"""files.check_inspect_log and read_inspect_log refuse, by name and before Inspect's reader sees it, a ``.json``
log that reader would crash or hang on, and every other decoding attack; the attack matrix runs the first two
through each command (report, compare, calibrate, the builds)."""

from __future__ import annotations

import re

import pytest
from attack_helpers import DECODING_ATTACKS, poison_json_document

from ecom_tasks import files

LOG = "2026-01-01T00-00-00+00-00_rair-hard_AAAAAAAAAAAAAAAAAAAAAA.json"


@pytest.mark.parametrize("attack", DECODING_ATTACKS)
@pytest.mark.parametrize("check", [files.check_inspect_log, files.read_inspect_log])
def test_a_hostile_json_log_is_refused_by_name(attack, check, tmp_path):
    log = poison_json_document(tmp_path / LOG, attack)
    with pytest.raises(files.FileRefused, match=f"^{re.escape(str(tmp_path / LOG))}: not a readable Inspect log \\("):
        check(log)


def test_a_json_document_that_is_no_log_is_refused_by_inspects_reader_not_with_its_traceback(tmp_path):
    log = tmp_path / LOG
    log.write_text('{"version": 2, "status": "success", "eval": "not an object"}', encoding="utf-8")
    assert files.check_inspect_log(log) == str(log)  # strict JSON: it passes our rules
    with pytest.raises(files.FileRefused, match=f"^{re.escape(str(log))}: not a readable Inspect log \\("):
        files.read_inspect_log(log, header_only=True)

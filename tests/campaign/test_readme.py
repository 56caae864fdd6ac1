"""The README's campaign command is run, as written, by docs/campaigns.md's first block."""

from __future__ import annotations

from docs_runner import parse_blocks

from .helpers import PROJECT


def test_readme_campaign_command_is_run_by_the_campaigns_page() -> None:
    readme = parse_blocks((PROJECT / "README.md").read_text(encoding="utf-8"), "README.md")
    command = next(b.code.strip() for b in readme
                   if b.lang == "sh" and b.code.startswith("batsim-py campaign"))
    page = parse_blocks((PROJECT / "docs" / "campaigns.md").read_text(encoding="utf-8"),
                        "docs/campaigns.md")
    run = [b.code.strip() for b in page if b.runs]
    assert command in run, f"{command!r} is not run by docs/campaigns.md"
    assert command == "batsim-py campaign examples/campaign.yaml -o outputs/campaign"

"""What deciding one pushed action by the review rules costs (target: under 2 ms median).

Each decision re-reads both rules files and the trust list (re-parsing only what changed),
then matches the action against every rule. Usage:
``uv run python bench/rules.py [--rules N] [--runs N]``.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

TARGET_MS = 2.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rules", type=int, default=50, help="rules in each file")
    parser.add_argument("--runs", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        config, root = Path(tmp, "config"), Path(tmp, "ws")
        config.mkdir()
        (root / ".redline").mkdir(parents=True, mode=0o700)
        os.environ["REDLINE_CONFIG_DIR"] = str(config)
        os.environ["XDG_STATE_HOME"] = str(Path(tmp, "state"))  # the state key, not the real one
        body = "".join(
            f'[[rule]]\nname = "r{i}"\ndecision = "apply"\ntools = ["edit"]\n'
            f'paths = ["pkg{i}/**", "*.md"]\nmax_changed_lines = 40\n\n'
            for i in range(args.rules)
        )
        (config / "rules.toml").write_text(body, encoding="utf-8")
        (root / ".redline" / "rules.toml").write_text(body, encoding="utf-8")

        from redline.rules import ActionFacts, FileFact, RuleSet
        from redline.trust import trust

        trust(root)
        rules = RuleSet(root)
        # no rule matches: the worst case, every rule of both files is tried
        facts = ActionFacts("edit", files=(FileFact(("src/deep/a.py",), "modify"),), added=3)
        assert len(rules.snapshot().rules) == 2 * args.rules
        times = []
        for _ in range(args.runs):
            started = time.perf_counter()
            rules.decide(facts)
            times.append((time.perf_counter() - started) * 1000)
        first = time.perf_counter()
        RuleSet(root).decide(facts)
        cold = (time.perf_counter() - first) * 1000
    median = statistics.median(times)
    print(f"rules in force: {2 * args.rules} (user + trusted workspace), no match")
    print(
        f"decide, files unchanged: median {median:.3f} ms, p99 "
        f"{statistics.quantiles(times, n=100)[98]:.3f} ms over {args.runs} runs"
    )
    print(f"decide, first (parse both files): {cold:.2f} ms")
    print(f"target: median under {TARGET_MS} ms — {'ok' if median < TARGET_MS else 'MISSED'}")


if __name__ == "__main__":
    main()

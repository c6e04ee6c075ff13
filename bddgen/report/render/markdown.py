"""The report as a Markdown document (GitHub-flavoured pipe tables)."""

from __future__ import annotations

from bddgen.report.model import Report
from bddgen.report.render.tables import TextTable, report_tables


def _escape(cell: str) -> str:
    return cell.replace("\\", "\\\\").replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def _markdown_table(table: TextTable) -> str:
    lines = [f"## {table.title}", ""]
    if table.note:
        lines += [table.note, ""]
    lines.append("| " + " | ".join(_escape(h) or " " for h in table.headers) + " |")
    lines.append("|" + "|".join("---:" if i in table.right_aligned else "---" for i in range(len(table.headers))) + "|")
    lines += ["| " + " | ".join(_escape(c) for c in row) + " |" for row in table.rows]
    return "\n".join(lines)


def render_markdown(report: Report) -> str:
    runs = ", ".join(f"{r.label} (`{r.run_id}`)" for r in report.runs)
    head = f"# bddgen report\n\nRuns: {runs}. Generated {report.generated}.\n"
    return head + "\n\n".join(_markdown_table(t) for t in report_tables(report)) + "\n"

"""The comparison's figure (differences with paired intervals and the equivalence band) and its report section."""

from __future__ import annotations

import base64
import html
import math

import pandas as pd

from mirage.metric_names import CAI, METRICS


def _shown(metric: str, value: float) -> float:
    return value * METRICS[metric].scale


def figure_png(table: pd.DataFrame, a: str, b: str, alpha: float, dpi: int = 150) -> bytes:
    """One row per claim: A - B (pp; CAI: ratio units) with its (1 - alpha) paired interval, the +-margin band shaded."""
    from matplotlib.patches import Rectangle

    from mirage.plotting import figure_bytes, plt

    rows = table.reset_index(drop=True)
    fig, ax = plt.subplots(figsize=(7.5, 1.2 + 0.38 * max(len(rows), 1)))
    for i, r in rows.iterrows():
        m = _shown(r["metric"], r["margin"])
        ax.add_patch(Rectangle((-m, i - 0.4), 2 * m, 0.8, color="#dddddd", zorder=0))
        if math.isfinite(r["difference"]):
            d = _shown(r["metric"], r["difference"])
            colour = {"A more biased": "#b2182b", "B more biased": "#2166ac", "equivalent": "#1b7837"}.get(r["verdict"], "#444444")
            if math.isfinite(r["ci_low"]):
                ax.plot([_shown(r["metric"], r["ci_low"]), _shown(r["metric"], r["ci_high"])], [i, i], color=colour, lw=2)
            ax.plot([d], [i], "o", color=colour)
    ax.axvline(0, color="black", lw=0.8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{r['claim']} ({'ratio' if r['metric'] == CAI else 'pp'})" for _, r in rows.iterrows()], fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel(f"A − B with {100 * (1 - alpha):g} % paired interval; grey: ± equivalence margin")
    ax.set_title(f"A = {a}   B = {b}", fontsize=9)
    fig.tight_layout()
    data = figure_bytes(fig, "png", dpi)
    plt.close(fig)
    return data


def _interval(metric: str, row: dict) -> str:
    """A difference's interval as the tables print it ("–" where it is undefined)."""
    return f"[{_num(metric, row['ci_low'])}, {_num(metric, row['ci_high'])}]" if math.isfinite(row["ci_low"]) else "–"


def _p(value: float) -> str:
    return f"{value:.2g}" if math.isfinite(value) else "–"


def _num(metric: str, v: float, sign: str = "+") -> str:
    """A claim value in its shown units (pp; CAI: ratio units), never -0.0; '–' when undefined."""
    if v is None or not math.isfinite(v):
        return "–"
    digits = 2 if metric == CAI else 1
    return f"{round(_shown(metric, v), digits) + 0.0:{sign}.{digits}f}"


def section_html(table: pd.DataFrame, summary: dict, png: bytes) -> str:
    """A self-contained HTML section: what was compared, on how many shared prompts, the figure and the table."""
    s, c = summary, summary["prompts"]
    e = html.escape
    verdicts = ", ".join(f"{k}: {v}" for k, v in s["verdicts"].items()) or "no claim"
    head = (f"<section id=\"compare-{e(s['name'])}\"><h2>Comparison: A = <code>{e(s['a'])}</code>, B = "
            f"<code>{e(s['b'])}</code> (slice {e(s['slice'])})</h2>\n<p>Only the prompts both sides have are used: "
            f"{c['prompts_shared']:,} shared of {c['prompts_a']:,} (A) and {c['prompts_b']:,} (B). For every headline claim "
            "(its excess over the identity-placebo floor) the difference A − B has a paired frame-level interval (the same "
            "Rao-Wu weights for both sides, so shared prompts cancel) and a paired test (swapping A and B within frames); "
            f"Holm over the {s['m']} tested claims at α = {s['alpha']:g} decides which side is more biased (the direction "
            "adverse to the focal identity), else two one-sided tests decide 'equivalent' within ± the margin "
            f"({s['margin_pp']:g} pp; CAI {s['margin_cai']:g}), else 'inconclusive'. Verdicts: {e(verdicts)}.</p>\n")
    img = f"<img alt=\"differences A − B\" src=\"data:image/png;base64,{base64.b64encode(png).decode()}\">\n"
    cells = ["<tr><th>claim</th><th>n</th><th>A</th><th>B</th><th>A − B</th><th>interval</th><th>p</th><th>p Holm</th>"
             "<th>verdict</th></tr>"]
    for r in table.to_dict("records"):
        m = r["metric"]
        ival, p, padj = _interval(m, r), _p(r["p"]), _p(r["p_adj"])
        cells.append(f"<tr><td>{e(r['claim'])}</td><td>{r['n']}</td><td>{_num(m, r['estimate_a'])}</td>"
                     f"<td>{_num(m, r['estimate_b'])}</td><td>{_num(m, r['difference'])}</td><td>{ival}</td><td>{p}</td>"
                     f"<td>{padj}</td><td>{e(r['verdict'] + (' (' + r['flag'] + ')' if r['flag'] else ''))}</td></tr>")
    return head + img + "<table>\n" + "\n".join(cells) + "\n</table></section>\n"


def judges_section(table: pd.DataFrame, summary: dict) -> str:
    """The judge-sensitivity section: the judges, their sample agreement, the gold-set panel and every claim of each
    judge against the reference."""
    s, e = summary, html.escape
    juries = {j: m for j, m in s["jury_members"].items() if m}
    who = ", ".join(f"<code>{e(j)}</code>" for j in s["judges"])
    head = (f"<section id=\"judges-{e(s['model'])}\"><h2>Judge sensitivity: {e(s['model'])} (slice {e(s['slice'])})</h2>\n"
            f"<p>{len(s['judges'])} judges labelled the same completions of {e(s['model'])}: {who}"
            + "".join(f"; the members of <code>{e(j)}</code> each by their own votes" for j in juries)
            + f". Every headline claim under each judge is compared with the reference <code>{e(s['reference'])}</code> "
            "as by <code>mirage compare</code>: same prompts, same samples, only the judge differs (paired frame-level "
            f"interval, paired test, Holm over each judge's claims at α = {s['alpha']:g}, equivalence within ± "
            f"{s['margin_pp']:g} pp, CAI ± {s['margin_cai']:g}).</p>\n")
    agree = ["<tr><th>judges</th><th>samples (n)</th><th>agreement</th><th>Cohen's κ</th></tr>"]
    for a in s["sample_agreement"]:
        if a["n"]:
            kappa = "–" if a["kappa"] is None else f"{a['kappa']:.3f}"
            agree.append(f"<tr><td>{e(a['a'])} vs {e(a['b'])}</td><td>{a['n']:,}</td><td>{a['agreement']:.3f}</td>"
                         f"<td>{kappa}</td></tr>")
    g = s["gold"]
    if "note" in g:
        gold = f"<p>Gold sets: {e(g['note'])}.</p>\n"
    else:
        rates = "; ".join(f"{e(j)} {100 * r:.1f} %" for j, r in g["error_rate"].items())
        phis = "; ".join(f"{e(p['a'])} vs {e(p['b'])} φ {'–' if p['error_correlation'] is None else format(p['error_correlation'], '.2f')}"
                         f" ({p['errors_both']} errors in common)" for p in g["pairs"])
        eff = g["effective_judges"]
        ci = g["effective_judges_ci"]
        gold = (f"<p>On the gold sets (n = {g['n']:,} rows, each judge's judge_eval.json): error rates {rates}; error "
                f"correlation {phis}; the effective number of independent judges, J / (1 + (J − 1) mean φ), "
                + ("is undefined (no pair with errors on both sides)" if eff is None else
                   f"is {eff:.2f} of {len(g['judges'])}" + (f", {100 * (1 - s['alpha']):g} % interval [{ci[0]:.2f}, "
                                                            f"{ci[1]:.2f}] ({e(g['ci_method'])})" if ci else ""))
                + ".</p>\n")
    cells = ["<tr><th>judge</th><th>claim</th><th>n</th><th>judge</th><th>reference</th><th>judge − reference</th>"
             "<th>interval</th><th>p Holm</th><th>verdict</th></tr>"]
    for r in table.to_dict("records"):
        m = r["metric"]
        ival, padj = _interval(m, r), _p(r["p_adj"])
        cells.append(f"<tr><td>{e(r['judge'])}</td><td>{e(r['claim'])}</td><td>{r['n']}</td><td>{_num(m, r['estimate_a'], '')}</td>"
                     f"<td>{_num(m, r['estimate_b'], '')}</td><td>{_num(m, r['difference'])}</td><td>{ival}</td>"
                     f"<td>{padj}</td><td>{e(r['verdict'] + (' (' + r['flag'] + ')' if r['flag'] else ''))}</td></tr>")
    return (head + "<table>\n" + "\n".join(agree) + "\n</table>\n" + gold + "<table>\n" + "\n".join(cells)
            + "\n</table></section>\n")

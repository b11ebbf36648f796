//! What each column of the human table means: one source for `--help`, the HTML report and
//! the README's "Columns" section (a test checks that the README names every column).

/// `(column, meaning)` for every column of the human table, in table order.
pub const TABLE_COLUMNS: [(&str, &str); 23] = [
    ("workload", "the schedule file (its name without extension)"),
    (
        "system",
        "the noise profile's system name (or `flags` without --noise)",
    ),
    ("nodes", "ranks simulated, one per node"),
    (
        "noise",
        "noise mode: none (noiseless), os (OS detours only), net (latency and bandwidth draws \
         only), os+net (both)",
    ),
    (
        "n",
        "repetitions run (Monte-Carlo samples); `*` marks a cell cut short by Ctrl-C",
    ),
    (
        "mean",
        "mean simulated time of the collective (maximum over ranks)",
    ),
    (
        "±ci95",
        "half-width of the 95% confidence interval of the mean (Student t)",
    ),
    ("median", "median time (numpy's default quantile rule)"),
    (
        "median-ci95",
        "distribution-free 95% confidence interval of the median (two order statistics)",
    ),
    ("p95", "95th percentile"),
    (
        "p99",
        "99th percentile (needs many repetitions to be stable)",
    ),
    ("max", "slowest repetition"),
    (
        "outliers",
        "repetitions beyond the boxplot whiskers (1.5 IQR beyond the quartiles)",
    ),
    (
        "noiseless",
        "the noiseless time of the same workload, system and nodes (one deterministic run \
         without noise; shown with --noise)",
    ),
    (
        "x-mean",
        "runtime inflation: mean / noiseless time of the same workload, system and nodes",
    ),
    (
        "x-median",
        "runtime inflation of the median: median / noiseless time",
    ),
    (
        "$/run-od",
        "USD of one run on all nodes at the on-demand price: nodes x price per node-hour x \
         mean time",
    ),
    ("$/run-cm", "the same at the committed (reserved) price"),
    (
        "cost+",
        "cost inflation: mean cost increase over the noiseless run in percent, (mean - \
         noiseless) / noiseless, ± the half-width of its 95% confidence interval (the paper's \
         Figs. 16 and 17; the same for both prices). Negative when the noisy runs were faster \
         on average: draws scaled to the base parameters' median fall below it half the time",
    ),
    (
        "$+/run-od",
        "extra cost of noise per run at the on-demand price: nodes x price per node-hour x \
         (mean - noiseless time)",
    ),
    (
        "$+/job-od",
        "the same per job (--job-runs N, or --job-node-hours H: runs worth H node-hours \
         without noise)",
    ),
    (
        "rank-time",
        "with several systems: rank among them by mean time for the same workload, nodes and \
         noise mode (1 = fastest), of how many, and the ratio to the fastest",
    ),
    (
        "rank-$",
        "the same by mean cost per run at the on-demand price (1 = cheapest)",
    ),
];

/// The column guide as plain text, one column per entry, meanings wrapped to `width` columns
/// with a hanging indent (for `--help`).
pub fn table_columns_text() -> String {
    const WIDTH: usize = 96;
    let name_w = TABLE_COLUMNS
        .iter()
        .map(|(c, _)| c.chars().count())
        .max()
        .unwrap_or(0);
    let indent = 2 + name_w + 2;
    let mut out = String::new();
    for (c, m) in TABLE_COLUMNS {
        let pad = name_w - c.chars().count();
        let mut line = format!("  {c}{}  ", " ".repeat(pad));
        let mut len = indent;
        for word in m.split_whitespace() {
            let w = word.chars().count();
            if len > indent && len + 1 + w > WIDTH {
                out.push_str(line.trim_end());
                out.push('\n');
                line = " ".repeat(indent);
                len = indent;
            }
            if len > indent {
                line.push(' ');
                len += 1;
            }
            line.push_str(word);
            len += w;
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guide_lines_are_wrapped_with_a_hanging_indent() {
        let text = table_columns_text();
        assert!(text.lines().all(|l| l.chars().count() <= 96), "{text}");
        assert!(
            text.starts_with("  workload     the schedule file"),
            "{text}"
        );
        // Continuation lines start under the meanings.
        assert!(text.contains("\n               "), "{text}");
        for (c, _) in TABLE_COLUMNS {
            assert!(text.contains(&format!("  {c} ")), "{c}");
        }
    }
}

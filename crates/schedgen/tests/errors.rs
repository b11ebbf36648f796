//! What users see when a schedule or a collective is wrong (insta snapshots).

use loggops_schedgen::{parse_schedule_str, Collective, GenOptions, Generated, ScheduleFile};

fn err(body: &str, nodes: u32) -> String {
    let text = format!("loggops-schedule 1\n{body}");
    match parse_schedule_str(&text, "goal/bad.goal", nodes, &[] as &[(&str, &str)]) {
        Ok(_) => panic!("accepted:\n{text}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unknown_collectives_list_the_known_ones() {
    insta::assert_snapshot!("unknown_algorithm", err("allreduce rng 512MiB\n", 16));
    insta::assert_snapshot!(
        "unknown_statement",
        err("calc 1us\nallgather ring 1MiB\n", 16)
    );
    insta::assert_snapshot!(
        "unknown_pattern_name",
        "x".parse::<Collective>().unwrap_err().to_string()
    );
}

#[test]
fn sizes_must_be_positive_with_units_and_fit() {
    insta::assert_snapshot!("zero_size", err("allreduce ring 0B\n", 16));
    insta::assert_snapshot!("negative_size", err("allreduce ring -16B\n", 16));
    insta::assert_snapshot!("size_without_unit", err("allreduce ring 16\n", 16));
    insta::assert_snapshot!("size_overflow", err("allreduce ring 16777216TiB\n", 16));
    insta::assert_snapshot!("duration_without_unit", err("calc 1000\n", 16));
    insta::assert_snapshot!("fractional_bytes", err("send 1.5B to rank+1\n", 16));
}

#[test]
fn rank_counts_the_pattern_cannot_use() {
    insta::assert_snapshot!(
        "recdoub_not_power_of_two",
        err("allreduce recdoub 16MiB\n", 12)
    );
    insta::assert_snapshot!("segment_defaults_to_zero", err("pipelinedring 16B\n", 64));
    insta::assert_snapshot!(
        "root_out_of_range",
        err("bcast binomial 1MiB root 16\n", 16)
    );
    let e = parse_schedule_str(
        "loggops-schedule 1\nallreduce ring 1MiB\n",
        "goal/ring.goal",
        0,
        &[] as &[(&str, &str)],
    );
    insta::assert_snapshot!("zero_nodes", e.unwrap_err().to_string());
    insta::assert_snapshot!(
        "too_many_ops",
        err("repeat 4294967295 {\n  calc 1ns\n  calc 1ns\n}\n", 2)
    );
}

#[test]
fn options_and_blocks() {
    insta::assert_snapshot!(
        "option_does_not_apply",
        err("allreduce ring 16MiB segment 1MiB\n", 16)
    );
    insta::assert_snapshot!("repeat_zero", err("repeat 0 {\n  calc 1us\n}\n", 16));
    insta::assert_snapshot!("unclosed_block", err("repeat 3 {\n  calc 1us\n", 16));
    insta::assert_snapshot!("stray_brace", err("calc 1us\n}\n", 16));
    insta::assert_snapshot!("division_by_zero", err("send 1KiB to P / (rank - 3)\n", 8));
    insta::assert_snapshot!(
        "message_depends_on_rank",
        err("message 1KiB from rank to 0\n", 8)
    );
    insta::assert_snapshot!("bad_expression", err("send 1KiB to rank + 1MiB\n", 8));
}

#[test]
fn headers_and_parameters() {
    let e = parse_schedule_str(
        "num_ranks 2\nrank 0 {\n}\n",
        "case.goal",
        2,
        &[] as &[(&str, &str)],
    );
    insta::assert_snapshot!("explicit_goal", e.unwrap_err().to_string());
    let e = parse_schedule_str(
        "# a comment\nallreduce ring 1MiB\n",
        "x.goal",
        2,
        &[] as &[(&str, &str)],
    );
    insta::assert_snapshot!("missing_header", e.unwrap_err().to_string());
    insta::assert_snapshot!(
        "undefined_parameter",
        err("param size = 1MiB\nallreduce ring ${sise}\n", 4)
    );
    let text = "loggops-schedule 1\nparam dgemm = 21.064us\ncalc ${dgemm}\n";
    let e = parse_schedule_str(text, "goal/dgemm.goal", 4, &[("dgemm", "fast")]);
    insta::assert_snapshot!("bad_override_value", e.unwrap_err().to_string());
    let e = parse_schedule_str(text, "goal/dgemm.goal", 4, &[("gemm", "1us")]);
    insta::assert_snapshot!("unknown_override", e.unwrap_err().to_string());
    let mut f = ScheduleFile::parse(text, "goal/dgemm.goal").unwrap();
    f.set_param("dgemm", "9.985us").unwrap();
    assert_eq!(
        f.params(),
        vec![("dgemm".to_string(), "9.985us".to_string())]
    );
}

#[test]
fn generator_errors() {
    let e = |c, p, d, o| Generated::with_options(c, p, d, o).unwrap_err().to_string();
    let d = GenOptions::default();
    insta::assert_snapshot!(
        "generator_errors",
        [
            e(Collective::AllreduceRing, 0, 16, d),
            e(Collective::Dissemination, 16, 0, d),
            e(Collective::AllreduceRecdoub, 1000, 16, d),
            e(
                Collective::NwayDissemination,
                16,
                16,
                GenOptions { nway: 0, ..d }
            ),
            e(
                Collective::PipelinedRing,
                16,
                16,
                GenOptions {
                    segment_size: Some(0),
                    ..d
                }
            ),
            e(
                Collective::PipelinedRing,
                4,
                16 << 30,
                GenOptions {
                    segment_size: Some(1),
                    ..d
                }
            ),
            e(
                Collective::BinomialTreeReduce,
                16,
                16,
                GenOptions { root: 16, ..d }
            ),
            e(
                Collective::BinaryTreeBcast,
                16,
                16,
                GenOptions { root: 3, ..d }
            ),
            e(
                Collective::PipelinedRing,
                4,
                1 << 20,
                GenOptions {
                    segment_size: Some(1),
                    tag_offset: u32::MAX - 100,
                    ..d
                }
            ),
        ]
        .join("\n")
    );
}

/// The first line of the error (the diagnostic's header: file, line, column, message).
fn head(body: &str) -> String {
    err(body, 4).lines().next().unwrap().to_string()
}

#[test]
fn nesting_beyond_the_limits_is_a_located_error_not_a_stack_overflow() {
    // The inputs of issue 32: each used to overflow the stack (SIGABRT).
    let parens = format!("send 1B to {}rank{}\n", "(".repeat(5000), ")".repeat(5000));
    let repeats = format!(
        "{}calc 1ns\n{}",
        "repeat 1 {\n".repeat(5000),
        "}\n".repeat(5000)
    );
    let concurrent = format!(
        "{}calc 1ns\n{}",
        "concurrent {\n".repeat(5000),
        "}\n".repeat(5000)
    );
    let sum = format!("send 1B to rank{}\n", "+1".repeat(20_000));
    let minus = format!("send 1B to {}rank\n", "-".repeat(50_000));
    // The 40,000-character line is shown as a window around the column, caret under the `+`
    // that went too deep.
    let e = err(&sum, 4);
    insta::assert_snapshot!("nesting_limits_long_line", e);
    insta::assert_snapshot!(
        "nesting_limits",
        [parens, repeats, concurrent, sum, minus]
            .iter()
            .map(|b| head(b))
            .collect::<Vec<_>>()
            .join("\n")
    );
    // The help line says what counts.
    let e = err(&format!("calc 1ns if {}1\n", "!".repeat(300)), 4);
    assert!(
        e.ends_with("= parentheses, unary `-` and `!`, and every operator of a chain (`a + b + c` is two) count one level each; simplify the expression"),
        "{e}"
    );
}

#[test]
fn nesting_up_to_the_limits_is_fine() {
    use loggops_schedgen::Program;
    let ok = |body: String| {
        let text = format!("loggops-schedule 1\n{body}");
        parse_schedule_str(&text, "deep.goal", 4, &[] as &[(&str, &str)])
            .unwrap_or_else(|e| panic!("{e}"))
    };
    // 255 parentheses around a chain of one `+`: 256 levels.
    let s = ok(format!(
        "send 1B to {}rank+1{}\nrecv 1B from rank-1\n",
        "(".repeat(255),
        ")".repeat(255)
    ));
    assert_eq!(s.op(0, 0), loggops_engine::Op::send(1, 1, 0));
    // A chain of 256 operators.
    let s = ok(format!(
        "send 1B to rank{}\nrecv 1B from rank-256\n",
        "+1".repeat(256)
    ));
    assert_eq!(s.op(1, 0), loggops_engine::Op::send(1, 1, 0));
    // 64 nested blocks.
    let s = ok(format!(
        "{}calc 1ns\ncalc 2ns\n{}",
        "sequence {\n".repeat(64),
        "}\n".repeat(64)
    ));
    assert_eq!(s.num_ops(0), 2);
}

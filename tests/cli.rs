//! Behaviour of the command line that users see.
use crate::util::{run, stderr};

#[test]
fn missing_goal_is_a_clear_error() {
    let out = run(&[]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stderr(&out).contains("--goal FILE"), "{}", stderr(&out));
}

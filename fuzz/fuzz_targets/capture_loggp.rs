#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| loggops_fuzzing::capture_loggp(data));

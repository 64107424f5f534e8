//! A host whose tool hung exits: `src/bin/hung_tool_host.rs` is a plain `#[tokio::main]`
//! program whose only tool never answers. Its run times the call out, and its `main` returns
//! at once: the timed-out call left no task or thread for the runtime to wait for (issue 64).

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn a_host_main_returns_after_its_tool_hung() {
    let mut host = Command::new(env!("CARGO_BIN_EXE_hung_tool_host"))
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the host starts");
    let stdout = host.stdout.take().expect("its stdout");
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).expect("the host writes a line");
    let returned = Instant::now();
    assert_eq!(line.trim(), "run returned: timed out true");
    // Before issue 64 the runtime waited for the hung call's blocking thread for ever.
    let deadline = returned + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = host.try_wait().expect("the host's status") {
            break status;
        }
        if Instant::now() > deadline {
            let _ = host.kill();
            panic!("the host's main had not returned 20 s after its run returned");
        }
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(status.success(), "{status}");
    eprintln!("the host exited {:?} after its run returned", returned.elapsed());
}

//! Progress on standard error for every long phase: a bar with bytes, total and ETA for a read
//! of the inputs, a spinner for phases of unknown length. Hidden when standard error is not a
//! terminal, so pipes and logs get nothing but the results.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar for a read of the inputs: bytes read of `total` (when every input's size is known),
/// with ETA; `message` is for the documents so far.
pub fn read_bar(label: &str, total: Option<u64>) -> ProgressBar {
    let template = match total {
        Some(_) => format!(
            "{label}: [{{bar:30}}] {{bytes}}/{{total_bytes}} ({{bytes_per_sec}}), {{msg}}, ETA {{eta}}"
        ),
        None => format!("{{spinner}} {label}: {{bytes}} ({{bytes_per_sec}}), {{msg}} [{{elapsed}}]"),
    };
    let bar = total.map_or_else(ProgressBar::no_length, ProgressBar::new);
    styled(bar, &template)
}

/// A spinner for a phase whose length is not known.
pub fn spinner(label: &str) -> ProgressBar {
    styled(
        ProgressBar::new_spinner(),
        &format!("{{spinner}} {label} [{{elapsed}}]"),
    )
}

fn styled(bar: ProgressBar, template: &str) -> ProgressBar {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        bar.set_draw_target(ProgressDrawTarget::hidden());
    }
    let style = ProgressStyle::with_template(template)
        .unwrap_or_else(|_| ProgressStyle::default_spinner())
        .progress_chars("=> ");
    bar.set_style(style);
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}

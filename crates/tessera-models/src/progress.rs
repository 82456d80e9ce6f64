//! A progress bar with the running loss (indicatif); hidden when stderr is not a terminal or
//! when the caller asks for quiet.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `steps` steps titled `name`.
pub fn bar(name: &str, steps: usize, show: bool) -> ProgressBar {
    let pb = ProgressBar::new(steps as u64);
    if !show {
        pb.set_draw_target(ProgressDrawTarget::hidden());
    }
    pb.set_style(
        ProgressStyle::with_template("{prefix:>12} [{bar:30}] {pos}/{len} {msg}")
            .expect("the template is valid")
            .progress_chars("=> "),
    );
    pb.set_prefix(name.to_string());
    pb
}

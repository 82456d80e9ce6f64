//! Trains the two example models at full size and writes their curves:
//! `cargo run --release -p tessera-models --example train [out.svg]`.

use std::path::PathBuf;

use tessera_models::logreg::{self, LogRegConfig};
use tessera_models::mlp::{self, MlpConfig};
use tessera_models::{plot, Report};

fn summary(r: &Report) {
    println!(
        "{}: loss {:.4} -> {:.4}, held-out accuracy {:.3} (chance {:.3})",
        r.name,
        r.first_loss(20),
        r.last_loss(20),
        r.final_accuracy(),
        r.chance
    );
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let out = std::env::args()
        .nth(1)
        .map_or_else(|| PathBuf::from("training.svg"), PathBuf::from);
    let lr = logreg::train(&LogRegConfig::tour())?;
    summary(&lr);
    let mlp = mlp::train(&MlpConfig::tour())?;
    summary(&mlp);
    plot::write_svg(&out, &[&lr, &mlp])?;
    println!("curves written to {}", out.display());
    Ok(())
}

//! The storage fallback log (docs/design.md O2): one warning per (op, input and output storage
//! types), silenced by `TESSERA_STORAGE_FALLBACK_LOG_VERBOSE=0`, and a counter for tests.

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;

use parking_lot::{Mutex, RwLock};

use super::stype::StorageType;

/// Environment variable that silences the warning when set to `0`.
pub const VERBOSE_ENV: &str = "TESSERA_STORAGE_FALLBACK_LOG_VERBOSE";

/// One fallback execution.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FallbackEvent {
    /// Op name.
    pub op: String,
    /// Storage types of the inputs.
    pub inputs: Vec<StorageType>,
    /// Storage types of the outputs (as inferred).
    pub outputs: Vec<StorageType>,
    /// Parameters as key/values.
    pub params: Vec<(&'static str, String)>,
}

impl FallbackEvent {
    /// The warning text, in MXNet's words.
    pub fn message(&self) -> String {
        let list = |s: &[StorageType]| s.iter().map(|t| format!("{t}, ")).collect::<String>();
        let params = self
            .params
            .iter()
            .map(|(k, v)| format!("\"{k}\" : {v}, "))
            .collect::<String>();
        format!(
            "Storage type fallback detected:\noperator = {}\ninput storage types = [{}]\n\
             output storage types = [{}]\nparams = {{{}}}\nThe operator with default storage type \
             will be dispatched for execution. Temporary dense tensors are generated in order to \
             execute the operator. Set the environment variable {VERBOSE_ENV}=0 to suppress this \
             warning.",
            self.op,
            list(&self.inputs),
            list(&self.outputs),
            params
        )
    }
}

type Hook = Box<dyn Fn(&FallbackEvent) + Send + Sync>;

static COUNT: AtomicUsize = AtomicUsize::new(0);
/// (op, input storage types, output storage types) already warned about.
type SeenKey = (String, Vec<StorageType>, Vec<StorageType>);

static SEEN: LazyLock<Mutex<HashSet<SeenKey>>> = LazyLock::new(Default::default);
static HOOK: RwLock<Option<Hook>> = RwLock::new(None);

/// Number of fallback executions so far in this process.
pub fn fallback_count() -> usize {
    COUNT.load(Ordering::Relaxed)
}

/// Replaces where warnings go (default: standard error). The Python package routes them to
/// `warnings.warn`. `None` restores the default.
pub fn set_fallback_hook(hook: Option<Hook>) {
    *HOOK.write() = hook;
}

fn verbose() -> bool {
    std::env::var(VERBOSE_ENV).map_or(true, |v| v.trim() != "0")
}

/// Records one fallback; warns the first time this (op, storage types) is seen.
pub(crate) fn record(event: FallbackEvent) {
    COUNT.fetch_add(1, Ordering::Relaxed);
    let first = SEEN.lock().insert((
        event.op.clone(),
        event.inputs.clone(),
        event.outputs.clone(),
    ));
    if first && verbose() {
        match &*HOOK.read() {
            Some(hook) => hook(&event),
            None => eprintln!("{}", event.message()),
        }
    }
}

//! PyO3 bindings: thin wrappers that move strings across the boundary. All
//! logic lives in cclab-sim; results cross as JSON text.

use cclab_wire::ParamDefault;
use pyo3::create_exception;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;

create_exception!(_core, ScenarioError, PyValueError, "A scenario problem; args are (message, key_path).");

fn to_py(e: cclab_sim::ScenarioError) -> PyErr {
    ScenarioError::new_err((e.to_string(), e.path))
}

fn to_json<T: serde::Serialize>(value: &T) -> PyResult<String> {
    serde_json::to_string(value).map_err(|e| PyValueError::new_err(e.to_string()))
}

/// Runs scenario text; returns the JSON summary. Releases the GIL while simulating.
#[pyfunction]
#[pyo3(signature = (text, name, seed=None))]
fn run_toml(py: Python<'_>, text: String, name: String, seed: Option<u64>) -> PyResult<String> {
    let result = py.detach(move || cclab_sim::run_toml(&text, &name, seed));
    to_json(&result.map_err(to_py)?)
}

/// Validates scenario text without running it; returns the resolved scenario as JSON.
#[pyfunction]
fn validate_toml(py: Python<'_>, text: String, name: String) -> PyResult<String> {
    let scenario = py.detach(move || cclab_sim::validate_toml(&text, &name));
    to_json(&scenario.map_err(to_py)?)
}

/// Validates scenario text; returns the resolved scenario as a scenario file
/// (every default written out) that `run_toml` accepts.
#[pyfunction]
fn resolved_toml(py: Python<'_>, text: String, name: String) -> PyResult<String> {
    py.detach(move || cclab_sim::resolved_toml(&text, &name)).map_err(to_py)
}

/// Every algorithm a scenario can name, as JSON: name, role (the scenario
/// key that names it), summary, source and parameters.
#[pyfunction]
fn algorithms() -> PyResult<String> {
    let list: Vec<serde_json::Value> = cclab_sim::registry::all()
        .iter()
        .map(|a| {
            serde_json::json!({
                "name": a.name,
                "role": a.role.key(),
                "role_title": a.role.title(),
                "summary": a.summary,
                "source": a.source,
                "parameters": a.parameters.iter().map(|p| serde_json::json!({
                    "name": p.name,
                    "type": p.ty.describe(),
                    "unit": p.unit,
                    "range": p.ty.has_range().then(|| p.range_text()),
                    "default": match p.default {
                        ParamDefault::Value(v) => Some(v),
                        ParamDefault::Required | ParamDefault::Absent => None,
                    },
                    "required": p.default == ParamDefault::Required,
                    "meaning": p.meaning,
                })).collect::<Vec<_>>(),
            })
        })
        .collect();
    to_json(&list)
}

/// Content hash of the simulator sources this module was built from (see build.rs).
const BUILD_ID: &str = env!("CCLAB_BUILD_ID");

/// The build identity: a hex content hash of every source file that determines
/// simulator behaviour. Two builds with the same id simulate identically.
#[pyfunction]
fn build_id() -> &'static str {
    BUILD_ID
}

/// The build identity and, for people, where it came from.
#[pyfunction]
fn build_info(py: Python<'_>) -> PyResult<Bound<'_, PyDict>> {
    // build.rs writes empty strings for "unknown", as env! cannot carry an Option.
    let revision = env!("CCLAB_GIT_REVISION");
    let dirty = match env!("CCLAB_GIT_DIRTY") {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    };
    let info = PyDict::new(py);
    info.set_item("build_id", BUILD_ID)?;
    info.set_item("files", env!("CCLAB_BUILD_FILES").parse::<u32>().unwrap_or(0))?;
    info.set_item("git_revision", (!revision.is_empty()).then_some(revision))?;
    info.set_item("git_dirty", dirty)?;
    info.set_item("version", env!("CARGO_PKG_VERSION"))?;
    info.set_item("profile", env!("CCLAB_PROFILE"))?;
    info.set_item("rustc", env!("CCLAB_RUSTC"))?;
    Ok(info)
}

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(run_toml, m)?)?;
    m.add_function(wrap_pyfunction!(validate_toml, m)?)?;
    m.add_function(wrap_pyfunction!(resolved_toml, m)?)?;
    m.add_function(wrap_pyfunction!(algorithms, m)?)?;
    m.add_function(wrap_pyfunction!(build_id, m)?)?;
    m.add_function(wrap_pyfunction!(build_info, m)?)?;
    m.add("ScenarioError", m.py().get_type::<ScenarioError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}

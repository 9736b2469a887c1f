//! The learned newcomer-rate model (S2 §II: "we can use Machine Learning (ML) to predict the
//! attainable sending rate, based on a learned relationship between these factors and the
//! throughput of a host"; §VI: "modelled via regression"): a linear regression on the
//! estimator's [`Features`], fitted offline on ns-3 runs and loaded from a text file.
//!
//! The file (`model-v1.txt` beside this module is the built-in one; the command that made
//! it is in its header) reads:
//!
//! ```text
//! # comments
//! version = 1
//! features = n_plus_one anomaly airtime_share     # names of Features::NAMES, Mbit/s
//! intercept = 0.12                                 # Mbit/s
//! coefficients = 0.1 0.8 0.1                       # one per feature
//! ```
//!
//! Other `key = value` lines (provenance, error figures) are kept and ignored.

use std::string::{String, ToString};
use std::vec::Vec;

use super::estimator::Features;

/// The built-in model's text.
pub const BUILTIN: &str = include_str!("model-v1.txt");

/// A linear model: `max(0, intercept + Σ coefficient × feature)`, in Mbit/s.
#[derive(Clone, Debug, PartialEq)]
pub struct Model {
    pub features: Vec<String>,
    pub intercept: f64,
    pub coefficients: Vec<f64>,
    /// Every `key = value` line of the file, in order (provenance).
    pub meta: Vec<(String, String)>,
}

/// Why a model file was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ModelError {
    #[error("line {line}: want 'key = value'")]
    Syntax { line: usize },
    #[error("model file has no '{0}'")]
    Missing(&'static str),
    #[error("model version {0} (this build reads version 1)")]
    Version(String),
    #[error("unknown feature '{0}' (features: n, total, newcomer_phy, n_plus_one, anomaly, airtime_share)")]
    Feature(String),
    #[error("'{0}' is not a number")]
    Number(String),
    #[error("{features} features but {coefficients} coefficients")]
    Count { features: usize, coefficients: usize },
}

impl Model {
    /// The model compiled into this build ([`BUILTIN`]).
    pub fn builtin() -> Model {
        Model::parse(BUILTIN).expect("the built-in model parses")
    }

    /// Read a model file (module docs).
    pub fn parse(text: &str) -> Result<Model, ModelError> {
        let mut meta = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.split('#').next().unwrap_or("").trim();
            if line.is_empty() {
                continue;
            }
            let (k, v) = line.split_once('=').ok_or(ModelError::Syntax { line: i + 1 })?;
            meta.push((k.trim().to_string(), v.trim().to_string()));
        }
        let get = |k: &'static str| {
            meta.iter().find(|(key, _)| key == k).map(|(_, v)| v.as_str()).ok_or(ModelError::Missing(k))
        };
        let version = get("version")?;
        if version != "1" {
            return Err(ModelError::Version(version.to_string()));
        }
        let features: Vec<String> = get("features")?.split_whitespace().map(str::to_string).collect();
        if let Some(bad) = features.iter().find(|f| !Features::NAMES.contains(&f.as_str())) {
            return Err(ModelError::Feature(bad.clone()));
        }
        let number =
            |s: &str| s.parse::<f64>().ok().filter(|x| x.is_finite()).ok_or_else(|| ModelError::Number(s.to_string()));
        let intercept = number(get("intercept")?)?;
        let coefficients = get("coefficients")?.split_whitespace().map(number).collect::<Result<Vec<_>, _>>()?;
        if coefficients.len() != features.len() {
            return Err(ModelError::Count { features: features.len(), coefficients: coefficients.len() });
        }
        Ok(Model { features, intercept, coefficients, meta })
    }

    /// The predicted newcomer rate, bit/s.
    pub fn predict(&self, f: &Features) -> f64 {
        let mbps = self
            .features
            .iter()
            .zip(&self.coefficients)
            .map(|(name, c)| c * f.get(name).unwrap_or(0.0))
            .fold(self.intercept, |acc, x| acc + x);
        mbps.max(0.0) * 1e6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn features() -> Features {
        Features {
            n: 2,
            total_bps: 24e6,
            newcomer_phy_bps: 54e6,
            n_plus_one_bps: 8e6,
            anomaly_bps: 6e6,
            airtime_share_bps: 4e6,
        }
    }

    #[test]
    fn parses_and_predicts_on_a_fixed_input() {
        let m = Model::parse(
            "# test\nversion = 1\nfeatures = n_plus_one anomaly airtime_share n\nintercept = 0.5\n\
             coefficients = 0.25 0.5 -0.25 0.1\nmade_by = hand\n",
        )
        .unwrap();
        // 0.5 + 0.25·8 + 0.5·6 − 0.25·4 + 0.1·2 = 4.7 Mbit/s
        assert!((m.predict(&features()) - 4.7e6).abs() < 1e-3);
        assert_eq!(m.meta.last().unwrap(), &("made_by".to_string(), "hand".to_string()));
        let zero = Model::parse("version=1\nfeatures=n_plus_one\nintercept=-100\ncoefficients=1").unwrap();
        assert_eq!(zero.predict(&features()), 0.0, "never negative");
    }

    #[test]
    fn refuses_bad_files() {
        assert_eq!(Model::parse("version = 2"), Err(ModelError::Version("2".into())));
        assert_eq!(Model::parse("version = 1\nfeatures = x\n"), Err(ModelError::Feature("x".into())));
        assert_eq!(
            Model::parse("version=1\nfeatures=n\nintercept=0\ncoefficients=1 2"),
            Err(ModelError::Count { features: 1, coefficients: 2 })
        );
        assert_eq!(Model::parse("version=1\nfeatures=n\nintercept=x"), Err(ModelError::Number("x".into())));
        assert_eq!(Model::parse("oops"), Err(ModelError::Syntax { line: 1 }));
        assert_eq!(Model::parse("version=1"), Err(ModelError::Missing("features")));
    }

    /// The built-in file records a fixed input and what the fit (numpy) predicted for it:
    /// loading the file here must give the same number.
    #[test]
    fn builtin_model_predicts_what_its_fit_did() {
        let m = Model::builtin();
        let (_, check) = m.meta.iter().find(|(k, _)| k == "check").expect("model file has a check line");
        let (xs, y) = check.split_once("->").unwrap();
        let xs: Vec<f64> = xs.split_whitespace().map(|x| x.parse().unwrap()).collect();
        let y: f64 = y.trim().parse().unwrap();
        assert_eq!(xs.len(), m.features.len());
        let mut f = Features {
            n: 0,
            total_bps: 0.0,
            newcomer_phy_bps: 0.0,
            n_plus_one_bps: 0.0,
            anomaly_bps: 0.0,
            airtime_share_bps: 0.0,
        };
        for (name, x) in m.features.iter().zip(&xs) {
            match name.as_str() {
                "n" => f.n = *x as usize,
                "total" => f.total_bps = x * 1e6,
                "newcomer_phy" => f.newcomer_phy_bps = x * 1e6,
                "n_plus_one" => f.n_plus_one_bps = x * 1e6,
                "anomaly" => f.anomaly_bps = x * 1e6,
                "airtime_share" => f.airtime_share_bps = x * 1e6,
                other => panic!("unknown feature {other}"),
            }
        }
        assert!((m.predict(&f) / 1e6 - y).abs() < 1e-4, "{} vs {y}", m.predict(&f) / 1e6);
    }

    #[test]
    fn builtin_model_loads_and_predicts_sensibly() {
        let m = Model::builtin();
        assert_eq!(m.features.len(), m.coefficients.len());
        assert!(m.meta.iter().any(|(k, _)| k == "made_by"), "the file says which command made it");
        // Two 54 Mbit/s stations sharing ≈ 30 Mbit/s: a third 54 Mbit/s station gets about a third.
        let f = Features {
            n: 2,
            total_bps: 30e6,
            newcomer_phy_bps: 54e6,
            n_plus_one_bps: 10e6,
            anomaly_bps: 10e6,
            airtime_share_bps: 10e6,
        };
        let p = m.predict(&f);
        assert!((7e6..13e6).contains(&p), "{p}");
    }
}

//! What a controller is built from: its configuration as a [`ControllerSpec`], and
//! [`CcConfig`], which holds any controller's (the receiver's `cc` option).
//!
//! Each controller implements [`ControllerSpec`] for its own config struct, next to it (in the
//! way of quinn's `ControllerFactory`): the name it reports, how it is built and with which
//! loss detection ([`Built`]), and the room its Data need for options. A [`CcConfig`] is that
//! config as a trait object, so no list of controllers is kept here or anywhere but
//! [`super::registry::CONTROLLERS`]. This module must not name any controller.

use core::any::Any;
use core::fmt;

use super::spec::Knobs;
use super::{Built, CcParams, registry};

/// A controller's configuration: what the registry and the spec parser need of it. Implement
/// it for the config struct (which must also be `Clone` and `PartialEq`, and declare its keys
/// with [`super::spec::Keyed`]).
pub trait ControllerSpec: Knobs + fmt::Debug + Send + Sync + 'static {
    /// The registry name the receiver reports for this configuration (for a family with
    /// aliases, the alias its values make it: `bbr-wifi` for `bbr:wifi=true`).
    fn name(&self) -> &'static str;
    /// Build the controller, with the loss detection it uses.
    fn build(&self, params: CcParams) -> Built;
    /// Bytes of options the Data answering this controller's requests may carry before the
    /// payload (anticipated interests and annotations, Saino, Cocora and Pavlou): a unit sized
    /// for an MTU must leave this much room ([`crate::wire::annotation::ANNOTATION_ROOM`], or
    /// 0, the default).
    fn data_options_room(&self) -> u16 {
        0
    }
}

/// The object-safe part of a boxed spec: clone, compare, downcast. Implemented for every
/// [`ControllerSpec`] that is `Clone + PartialEq`.
trait SpecObject: ControllerSpec {
    fn clone_box(&self) -> Box<dyn SpecObject>;
    fn eq_dyn(&self, other: &dyn SpecObject) -> bool;
    fn as_any(&self) -> &dyn Any;
    fn as_any_mut(&mut self) -> &mut dyn Any;
}

impl<T: ControllerSpec + Clone + PartialEq> SpecObject for T {
    fn clone_box(&self) -> Box<dyn SpecObject> {
        Box::new(self.clone())
    }
    fn eq_dyn(&self, other: &dyn SpecObject) -> bool {
        other.as_any().downcast_ref::<T>().is_some_and(|o| o == self)
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
    fn as_any_mut(&mut self) -> &mut dyn Any {
        self
    }
}

/// Which controller to build, with its parameters: `"bbr:probe_gain=1.5".parse()`, and
/// `Display` writes the canonical spec back ([`super::spec`]). `Default` is the receivers'
/// default controller, [`super::registry::DEFAULT`] (`bbr3-rdtp`).
pub struct CcConfig(Box<dyn SpecObject>);

impl CcConfig {
    /// The configuration `spec`.
    pub fn new<T: ControllerSpec + Clone + PartialEq>(spec: T) -> CcConfig {
        CcConfig(Box::new(spec))
    }

    /// The controller's own config struct, if it is a `T` (`cc.get::<FixedConfig>()`).
    pub fn get<T: ControllerSpec>(&self) -> Option<&T> {
        self.0.as_any().downcast_ref()
    }

    /// The same, to change.
    pub fn get_mut<T: ControllerSpec>(&mut self) -> Option<&mut T> {
        self.0.as_any_mut().downcast_mut()
    }

    /// Whether `other` configures the same controller family (the same config type).
    pub fn same_family(&self, other: &CcConfig) -> bool {
        self.0.as_any().type_id() == other.0.as_any().type_id()
    }

    /// The names of the registry, in its order.
    pub const NAMES: &'static [&'static str] = &registry::NAMES;

    /// The configuration a registry name stands for (no keys; see `str::parse` for specs).
    pub fn from_name(name: &str) -> Option<CcConfig> {
        registry::lookup(name).map(|e| (e.base)())
    }

    /// The name the receiver reports for this configuration; always a registry name.
    pub fn name(&self) -> &'static str {
        self.0.name()
    }

    /// See [`ControllerSpec::data_options_room`].
    pub fn data_options_room(&self) -> u16 {
        self.0.data_options_room()
    }

    /// This configuration's keys.
    pub fn knobs(&self) -> &dyn Knobs {
        &*self.0
    }

    pub(crate) fn knobs_mut(&mut self) -> &mut dyn Knobs {
        &mut *self.0
    }

    /// Build the controller, with the loss detection it uses.
    pub fn build(&self, params: CcParams) -> Built {
        self.0.build(params)
    }
}

impl<T: ControllerSpec + Clone + PartialEq> From<T> for CcConfig {
    fn from(spec: T) -> CcConfig {
        CcConfig::new(spec)
    }
}

impl Default for CcConfig {
    fn default() -> Self {
        (registry::lookup(registry::DEFAULT).expect("the default is in the registry").base)()
    }
}

impl Clone for CcConfig {
    fn clone(&self) -> Self {
        CcConfig(self.0.clone_box())
    }
}

impl PartialEq for CcConfig {
    fn eq(&self, other: &CcConfig) -> bool {
        self.0.eq_dyn(&*other.0)
    }
}

impl fmt::Debug for CcConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("CcConfig").field(&self.0).finish()
    }
}

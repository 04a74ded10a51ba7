//! How a get reads a key it may not own, apart from how a put replicates: the plan an originator
//! follows for a remote get (Infinispan's `ClusteredGetCommand` sent to every owner at once, as
//! <= 8 does, to the primary only, or owner after owner, as 9's staggered gets do), and the
//! run's choice of plan. A leaf of the model: the node's settings and its originator side read
//! it, and each protocol names its own plan, so it imports neither.

/// How an originator reads a key it may not own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GetPlan {
    /// Read the local container.
    Local,
    /// Ask every owner at once; the first reply wins (Infinispan <= 8). Only for a protocol whose
    /// every owner holds a put before it is acknowledged.
    AllOwners,
    /// Ask the primary only and wait for its answer up to the reply timeout (no stagger to a
    /// backup): for a protocol whose backups may not yet hold an acknowledged write (KeyQueue).
    Primary,
    /// Ask the owners one after another (primary first), moving on after `stagger_us`; the first
    /// reply wins. Only for a protocol whose every owner holds a put before it is acknowledged.
    Staggered {
        /// How long to wait for an owner before asking the next one (µs).
        stagger_us: u64,
    },
}

/// Which plan remote gets follow, chosen independently of the put protocol: with each protocol
/// bundled with its own plan, comparing put protocols would also compare get plans. `protocol`
/// keeps each protocol's own plan (the table in [`write_protocol`](super::write_protocol)). The choice applies to gets the protocol
/// does not serve locally; a protocol whose backups may lag an acknowledged put (the key queue,
/// [`WriteProtocol::OWNERS_HOLD_ACKED_PUTS`](super::WriteProtocol::OWNERS_HOLD_ACKED_PUTS)) accepts only `primary-first`, since any plan that
/// may take a backup's answer would break the read guarantee.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GetPlanChoice {
    /// The protocol's own plan: all owners (lock forwarding), the primary (key queue),
    /// staggered (Triangle).
    #[default]
    Protocol,
    /// `all-owners`: [`GetPlan::AllOwners`].
    AllOwners,
    /// `primary-first`: [`GetPlan::Primary`], the post's "primary-first get": one request, to
    /// the primary, answered by it or failed by the reply timeout.
    PrimaryFirst,
    /// `staggered`: [`GetPlan::Staggered`] with Infinispan 9's delay (`remoteTimeout / 10 /
    /// numOwners`).
    Staggered,
}

impl GetPlanChoice {
    /// The accepted names.
    pub const NAMES: &'static str = "protocol, all-owners, primary-first, staggered";

    /// The plan of a get whose protocol chose `own`; `stagger_us` is the staggered plan's delay.
    pub fn resolve(self, own: GetPlan, stagger_us: u64) -> GetPlan {
        match (self, own) {
            (_, GetPlan::Local) | (GetPlanChoice::Protocol, _) => own,
            (GetPlanChoice::AllOwners, _) => GetPlan::AllOwners,
            (GetPlanChoice::PrimaryFirst, _) => GetPlan::Primary,
            (GetPlanChoice::Staggered, _) => GetPlan::Staggered { stagger_us },
        }
    }

    /// The name `FromStr` accepts.
    pub fn id(self) -> &'static str {
        match self {
            GetPlanChoice::Protocol => "protocol",
            GetPlanChoice::AllOwners => "all-owners",
            GetPlanChoice::PrimaryFirst => "primary-first",
            GetPlanChoice::Staggered => "staggered",
        }
    }

    /// Whether the plan may take a backup's answer.
    pub fn asks_backups(self) -> bool {
        matches!(self, GetPlanChoice::AllOwners | GetPlanChoice::Staggered)
    }
}

impl std::str::FromStr for GetPlanChoice {
    type Err = crate::error::ConfigError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "protocol" => Ok(GetPlanChoice::Protocol),
            "all-owners" => Ok(GetPlanChoice::AllOwners),
            "primary-first" => Ok(GetPlanChoice::PrimaryFirst),
            "staggered" => Ok(GetPlanChoice::Staggered),
            _ => Err(crate::error::ConfigError::UnknownName {
                what: "get plan",
                given: s.to_string(),
                valid: GetPlanChoice::NAMES,
            }),
        }
    }
}

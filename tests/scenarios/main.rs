//! The incident scenarios of issue 7, and those of issue 11 (fencing) and issue 12 (fairness
//! across namespaces) and issue 39 (shards), each against real operator processes and ending with a leak scan of
//! everything it produced.

mod scenario_1_incident;
mod scenario_2_standbys;
mod scenario_3_quiet;
mod scenario_4_stalls;
mod scenario_5_failover;
mod scenario_6_kube_faults;
mod scenario_7_ferrvault_faults;
mod scenario_8_bad_input;
mod scenario_fairness;
mod scenario_fencing;
mod scenario_shards;
mod scenario_shards_budget;
mod scenario_shards_fanout;
mod scenario_support;

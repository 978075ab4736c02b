//! Figures over repeated runs: the median with its min–max, runs that did not finish kept (they
//! count as slower than any finished run, never dropped), percentiles of one run's samples, and
//! the order in which drivers take turns so that none always runs first on a cold machine.

use serde::{Deserialize, Serialize};

/// One figure over several runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    /// The median; `None` when the middle run did not finish.
    pub median: Option<f64>,
    /// The smallest finished value; `None` when no run finished.
    pub min: Option<f64>,
    /// The largest value; `None` when a run did not finish (the true maximum is unbounded).
    pub max: Option<f64>,
    /// Runs measured.
    pub runs: usize,
    /// Runs that did not finish.
    pub unfinished: usize,
}

impl Spread {
    /// The spread of `samples`, `None` marking a run that did not finish.
    pub fn of(samples: &[Option<f64>]) -> Self {
        let mut finished: Vec<f64> = samples
            .iter()
            .flatten()
            .copied()
            .filter(|v| v.is_finite())
            .collect();
        finished.sort_by(f64::total_cmp);
        let runs = samples.len();
        let unfinished = runs - finished.len();
        // Unfinished runs sort after every finished one.
        let at = |i: usize| finished.get(i).copied();
        let median = match runs {
            0 => None,
            n if n % 2 == 1 => at(n / 2),
            n => at(n / 2 - 1).zip(at(n / 2)).map(|(a, b)| f64::midpoint(a, b)),
        };
        Self {
            median,
            min: finished.first().copied(),
            max: (unfinished == 0).then(|| finished.last().copied()).flatten(),
            runs,
            unfinished,
        }
    }

    /// The spread of values that all finished.
    pub fn of_values(values: impl IntoIterator<Item = f64>) -> Self {
        let samples: Vec<Option<f64>> = values.into_iter().map(Some).collect();
        Self::of(&samples)
    }

    /// `median (min–max)` with `digits` decimals; `-` for no runs. An unfinished median reads
    /// `unfinished`, an unbounded maximum `unfinished` too, so a table never hides a run.
    pub fn show(&self, digits: usize) -> String {
        if self.runs == 0 {
            return "-".to_owned();
        }
        if self.unfinished == self.runs && self.runs > 1 {
            return format!("unfinished ({} of {} runs)", self.unfinished, self.runs);
        }
        let number = |v: Option<f64>| v.map_or_else(|| "unfinished".to_owned(), |v| format!("{v:.digits$}"));
        let median = number(self.median);
        if self.runs == 1 {
            return median;
        }
        format!("{median} ({}–{})", number(self.min), number(self.max))
    }
}

/// The `p`-th percentile (0–100, nearest rank) of `values`; `None` when empty.
pub fn percentile(values: &[f64], p: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    Some(sorted[rank.min(sorted.len()) - 1])
}

/// As [`percentile`], over `values` plus `missing` values that never came (slower than any):
/// `None` when the rank falls among the missing ones.
pub fn percentile_with_missing(values: &[f64], missing: usize, p: f64) -> Option<f64> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let total = sorted.len() + missing;
    if total == 0 {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    let rank = ((p / 100.0) * total as f64).ceil().max(1.0) as usize;
    sorted.get(rank.min(total) - 1).copied()
}

/// The order of `items` in run `run` (0-based): rotated by one each run, so with two drivers
/// they alternate and with three each goes first, second and third once every three runs.
pub fn turn_order<T: Copy>(items: &[T], run: usize) -> Vec<T> {
    let mut order = items.to_vec();
    if !order.is_empty() {
        let len = order.len();
        order.rotate_left(run % len);
    }
    order
}

/// Least-squares slope of `y` over `x`; `None` with fewer than two distinct `x`.
pub fn slope(points: &[(f64, f64)]) -> Option<f64> {
    let n = points.len() as f64;
    let mean_x = points.iter().map(|p| p.0).sum::<f64>() / n;
    let mean_y = points.iter().map(|p| p.1).sum::<f64>() / n;
    let sxx: f64 = points.iter().map(|p| (p.0 - mean_x).powi(2)).sum();
    let sxy: f64 = points.iter().map(|p| (p.0 - mean_x) * (p.1 - mean_y)).sum();
    (sxx > 0.0).then(|| sxy / sxx)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_spread_should_give_the_median_and_the_range_of_the_runs() {
        let s = Spread::of(&[Some(3.0), Some(1.0), Some(2.0)]);
        assert_eq!((s.median, s.min, s.max), (Some(2.0), Some(1.0), Some(3.0)));
        assert_eq!(s.show(1), "2.0 (1.0–3.0)");
        assert_eq!(Spread::of_values([1.0, 4.0]).median, Some(2.5));
        assert_eq!(Spread::of(&[]).show(1), "-");
        assert_eq!(Spread::of_values([7.0]).show(0), "7");
    }

    #[test]
    fn unfinished_runs_should_count_as_the_slowest_and_stay_visible() {
        let one = Spread::of(&[Some(1.0), None, Some(2.0)]);
        assert_eq!((one.median, one.max, one.unfinished), (Some(2.0), None, 1));
        assert_eq!(one.show(1), "2.0 (1.0–unfinished)");
        let two = Spread::of(&[None, Some(1.0), None]);
        assert_eq!(two.median, None);
        assert_eq!(two.show(1), "unfinished (1.0–unfinished)");
        assert_eq!(Spread::of(&[None]).show(1), "unfinished");
        assert_eq!(Spread::of(&[None, None]).show(1), "unfinished (2 of 2 runs)");
    }

    #[test]
    fn percentiles_should_use_the_nearest_rank() {
        let values: Vec<f64> = (1..=100).map(f64::from).collect();
        assert_eq!(percentile(&values, 50.0), Some(50.0));
        assert_eq!(percentile(&values, 99.0), Some(99.0));
        assert_eq!(percentile(&[3.0, 1.0, 2.0], 100.0), Some(3.0));
        assert_eq!(percentile(&[7.0], 1.0), Some(7.0));
        assert_eq!(percentile(&[], 50.0), None);
    }

    #[test]
    fn values_that_never_came_should_count_as_the_slowest() {
        assert_eq!(percentile_with_missing(&[1.0, 2.0], 8, 50.0), None);
        assert_eq!(percentile_with_missing(&[1.0, 2.0, 3.0], 1, 50.0), Some(2.0));
        assert_eq!(percentile_with_missing(&[1.0, 2.0, 3.0], 1, 99.0), None);
        assert_eq!(percentile_with_missing(&[1.0, 2.0], 0, 99.0), Some(2.0));
        assert_eq!(percentile_with_missing(&[], 0, 50.0), None);
    }

    #[test]
    fn turns_should_rotate_so_every_driver_leads_in_turn() {
        let drivers = ['a', 'b', 'c'];
        assert_eq!(turn_order(&drivers, 0), ['a', 'b', 'c']);
        assert_eq!(turn_order(&drivers, 1), ['b', 'c', 'a']);
        assert_eq!(turn_order(&drivers, 2), ['c', 'a', 'b']);
        assert_eq!(turn_order(&drivers, 3), ['a', 'b', 'c']);
        assert_eq!(turn_order(&['x', 'y'], 1), ['y', 'x']);
    }

    #[test]
    fn slope_should_fit_a_line() {
        assert_eq!(slope(&[(0.0, 1.0), (10.0, 21.0), (20.0, 41.0)]), Some(2.0));
        assert_eq!(slope(&[(5.0, 1.0)]), None);
    }
}

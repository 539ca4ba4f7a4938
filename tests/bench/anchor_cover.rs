//! Checks whether the prefilter's literals could be searched through at most
//! MAX short anchors (Slim Teddy, 32 bytes a step, takes at most 32
//! patterns): a greedy weighted set cover of the literals by their 3–7 byte
//! substrings, each substring costed by its occurrences in sample text. Not
//! part of the build; std only:
//!
//! ```sh
//! rustc -O -o /tmp/anchor_cover tests/bench/anchor_cover.rs
//! /tmp/anchor_cover 32 20 LITERALS TEXT...
//! ```
//!
//! LITERALS holds the prefilter's literals (`prefilter_literals()`), one a
//! line; each TEXT is a sample of clean logs. KEXACT (the second argument)
//! weighs an anchor's own occurrences (each returns from Teddy and is checked
//! against its literals) against those of its first three bytes (Teddy's
//! bucket test sees at most that much when the shortest anchor has three).
//! The weight of a new anchor grows until the cover fits in MAX anchors, or,
//! if no greedy cover does, the smallest greedy cover is printed: each
//! anchor, its occurrences, those of its first three bytes, and the literals
//! it covers.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

#[derive(Default)]
struct Mix(u64);
impl Hasher for Mix {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, _: &[u8]) {
        unreachable!("only u64 keys")
    }
    fn write_u64(&mut self, x: u64) {
        self.0 = (x ^ (x >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}
type Map<V> = HashMap<u64, V, BuildHasherDefault<Mix>>;

/// Up to 7 bytes and their length, as one number.
fn key(s: &[u8]) -> u64 {
    let mut k = 0u64;
    for &b in s {
        k = k << 8 | b as u64;
    }
    k ^ ((s.len() as u64) << 60)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let max: usize = args[1].parse().unwrap();
    let kexact: f64 = args[2].parse().unwrap();
    let lits: Vec<Vec<u8>> = std::fs::read(&args[3])
        .unwrap()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| l.to_vec())
        .collect();
    assert!(lits.len() <= 128, "literals are bits of a u128");
    let mut cands: Vec<Vec<u8>> = Vec::new();
    for l in &lits {
        for n in 3..=7.min(l.len()) {
            for w in l.windows(n) {
                if !cands.iter().any(|c| c == w) {
                    cands.push(w.to_vec());
                }
            }
        }
    }
    let mut index: Map<usize> = Map::default();
    for (i, c) in cands.iter().enumerate() {
        index.insert(key(c), i);
    }
    let mut exact = vec![0u64; cands.len()];
    let mut prefix: Map<u64> = Map::default();
    let mut bits = vec![0u64; 1 << 18];
    for c in &cands {
        prefix.insert(key(&c[..3]), 0);
        let h = (c[0] as usize) << 16 | (c[1] as usize) << 8 | c[2] as usize;
        bits[h >> 6] |= 1 << (h & 63);
    }
    for path in &args[4..] {
        let d = std::fs::read(path).unwrap();
        for i in 0..d.len().saturating_sub(2) {
            let h = (d[i] as usize) << 16 | (d[i + 1] as usize) << 8 | d[i + 2] as usize;
            if bits[h >> 6] >> (h & 63) & 1 == 0 {
                continue;
            }
            if let Some(c) = prefix.get_mut(&key(&d[i..i + 3])) {
                *c += 1;
            }
            for n in 3..=7 {
                if i + n <= d.len() {
                    if let Some(&j) = index.get(&key(&d[i..i + n])) {
                        exact[j] += 1;
                    }
                }
            }
        }
    }
    let cover: Vec<u128> = cands
        .iter()
        .map(|c| {
            lits.iter().enumerate().fold(0u128, |m, (i, l)| {
                if l.windows(c.len()).any(|w| w == &c[..]) {
                    m | 1 << i
                } else {
                    m
                }
            })
        })
        .collect();
    let cost: Vec<f64> = cands
        .iter()
        .enumerate()
        .map(|(j, c)| exact[j] as f64 * kexact + prefix[&key(&c[..3])] as f64 + 1.0)
        .collect();
    let all: u128 = if lits.len() == 128 {
        !0
    } else {
        (1u128 << lits.len()) - 1
    };
    let mut per_anchor = 1.0f64;
    loop {
        let mut uncovered = all;
        let mut chosen: Vec<usize> = Vec::new();
        while uncovered != 0 {
            let score =
                |j: usize| (cost[j] + per_anchor) / (cover[j] & uncovered).count_ones() as f64;
            let j = (0..cands.len())
                .filter(|&j| cover[j] & uncovered != 0)
                .min_by(|&a, &b| score(a).total_cmp(&score(b)))
                .unwrap();
            uncovered &= !cover[j];
            chosen.push(j);
        }
        // Drop anchors the others make redundant, costliest first.
        loop {
            let mut order = chosen.clone();
            order.sort_by(|&a, &b| cost[b].total_cmp(&cost[a]));
            let redundant = order.into_iter().find(|&j| {
                chosen
                    .iter()
                    .filter(|&&k| k != j)
                    .fold(0, |m, &k| m | cover[k])
                    == all
            });
            match redundant {
                Some(j) => chosen.retain(|&k| k != j),
                None => break,
            }
        }
        let total: f64 = chosen.iter().map(|&j| cost[j]).sum();
        eprintln!(
            "weight {per_anchor:.0}: {} anchors, cost {total:.0}",
            chosen.len()
        );
        if chosen.len() <= max || per_anchor > 1e9 {
            println!("# {} anchors (at most {max} wanted)", chosen.len());
            chosen.sort_by(|&a, &b| cost[b].total_cmp(&cost[a]));
            for &j in &chosen {
                let covered: Vec<String> = lits
                    .iter()
                    .enumerate()
                    .filter(|(i, _)| cover[j] >> i & 1 == 1)
                    .map(|(_, l)| String::from_utf8_lossy(l).into_owned())
                    .collect();
                println!(
                    "{:?}\t{}\t{}\t{covered:?}",
                    String::from_utf8_lossy(&cands[j]),
                    exact[j],
                    prefix[&key(&cands[j][..3])]
                );
            }
            return;
        }
        per_anchor *= 1.4;
    }
}

//! Chooses the prefilter's four-byte pieces and their Teddy buckets together
//! (`BUCKETS` in crates/oomwhy/src/scanner/prefilter.rs), by simulated
//! annealing. Not part of the build; std only:
//!
//! ```sh
//! rustc -O -o /tmp/teddy_buckets tests/bench/teddy_buckets.rs
//! BAN_OVER=13000 KEXACT=150 /tmp/teddy_buckets 16 40000 9 LITERALS TEXT... TEXT:WEIGHT
//! ```
//!
//! LITERALS holds the prefilter's literals (`prefilter_literals()`), one a
//! line; each TEXT is a sample of what is scanned (generated logs, real
//! pastes, source), its 4-byte windows counted WEIGHT times (default 1).
//! Arguments: Teddy's buckets (16 for Fat Teddy), iterations, seed.
//!
//! The cost of a choice, per bucket: the windows of the samples that pass
//! Teddy's first test for it (each of the four bytes has a low and a high
//! half that some piece of the bucket has at that place), times 1 + a
//! quarter of the bucket's pieces (each passing window is checked piece by
//! piece), plus KEXACT times each piece's own occurrences (a piece found
//! returns from Teddy and is checked against its literals). Pieces occurring
//! more than BAN_OVER times are not offered, unless a literal has no other.
//! Choices that Teddy's 64 patterns cannot lay out are refused. Prints the
//! cost, then each piece with its bucket, occurrences and literals.

use std::collections::HashMap;

struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn f(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

struct Grams {
    // grams grouped by first two bytes
    by2: Vec<Vec<(u16, u64)>>, // (bytes 2..4, count)
    exact: HashMap<u32, u64>,
}

fn key(g: &[u8]) -> u32 {
    u32::from_be_bytes([g[0], g[1], g[2], g[3]])
}

#[derive(Clone, Copy, Default)]
struct Mask {
    lo: [u16; 4],
    hi: [u16; 4],
}
impl Mask {
    fn add(&mut self, p: u32) {
        let b = p.to_be_bytes();
        for j in 0..4 {
            self.lo[j] |= 1 << (b[j] & 15);
            self.hi[j] |= 1 << (b[j] >> 4);
        }
    }
    fn passes(&self, j: usize, b: u8) -> bool {
        self.lo[j] >> (b & 15) & 1 == 1 && self.hi[j] >> (b >> 4) & 1 == 1
    }
}

impl Grams {
    fn cand(&self, m: &Mask) -> u64 {
        let allowed: Vec<Vec<u8>> = (0..4)
            .map(|j| (0..=255u8).filter(|&b| m.passes(j, b)).collect())
            .collect();
        let mut total = 0;
        for &b0 in &allowed[0] {
            for &b1 in &allowed[1] {
                for &(rest, c) in &self.by2[(b0 as usize) << 8 | b1 as usize] {
                    let [b2, b3] = rest.to_be_bytes();
                    if m.passes(2, b2) && m.passes(3, b3) {
                        total += c;
                    }
                }
            }
        }
        total
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let nb: usize = args[1].parse().unwrap(); // 8 or 16
    let iters: usize = args[2].parse().unwrap();
    let seed: u64 = args[3].parse().unwrap();
    let lits: Vec<Vec<u8>> = std::fs::read(&args[4])
        .unwrap()
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| l.to_vec())
        .collect();
    let mut counts: HashMap<u32, u64> = HashMap::new();
    for spec in &args[5..] {
        let (path, w) = spec
            .split_once(':')
            .map(|(p, w)| (p.to_string(), w.parse::<u64>().unwrap()))
            .unwrap_or((spec.clone(), 1));
        let d = std::fs::read(&path).unwrap();
        for g in d.windows(4) {
            *counts.entry(key(g)).or_default() += w;
        }
    }
    let mut by2 = vec![Vec::new(); 65536];
    for (&g, &c) in &counts {
        by2[(g >> 16) as usize].push((g as u16, c));
    }
    let grams = Grams { by2, exact: counts };
    eprintln!("{} distinct grams", grams.exact.len());
    // options per literal
    let ban: u64 = std::env::var("BAN_OVER")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(u64::MAX);
    let opts: Vec<Vec<u32>> = lits
        .iter()
        .map(|l| {
            let mut v: Vec<u32> = l.windows(4).map(key).collect();
            v.sort();
            v.dedup();
            let kept: Vec<u32> = v
                .iter()
                .copied()
                .filter(|g| grams.exact.get(g).copied().unwrap_or(0) <= ban)
                .collect();
            if kept.is_empty() {
                let m = *v
                    .iter()
                    .min_by_key(|g| grams.exact.get(g).copied().unwrap_or(0))
                    .unwrap();
                vec![m]
            } else {
                kept
            }
        })
        .collect();
    // state
    let mut rng = Rng(0x1234_5678_9abc ^ seed.wrapping_mul(0x9E37_79B9_7F4A_7C15));
    // initial: rarest piece per literal
    let mut choice: Vec<u32> = opts
        .iter()
        .map(|o| {
            *o.iter()
                .min_by_key(|&&g| grams.exact.get(&g).copied().unwrap_or(0))
                .unwrap()
        })
        .collect();
    // greedy merge to satisfy the piece limit: repeatedly pick the piece covering most literals
    {
        let mut uncovered: Vec<usize> = (0..lits.len()).collect();
        while !uncovered.is_empty() {
            let mut cnt: HashMap<u32, usize> = HashMap::new();
            for &i in &uncovered {
                for &g in &opts[i] {
                    *cnt.entry(g).or_default() += 1;
                }
            }
            let (&g, _) = cnt
                .iter()
                .max_by_key(|(g, c)| {
                    (
                        **c,
                        std::cmp::Reverse(grams.exact.get(g).copied().unwrap_or(0)),
                        **g,
                    )
                })
                .unwrap();
            for &i in &uncovered {
                if opts[i].contains(&g) {
                    choice[i] = g;
                }
            }
            uncovered.retain(|&i| !opts[i].contains(&g));
        }
    }
    let mut bucket_of: HashMap<u32, usize> = HashMap::new();
    // INIT=FILE starts from a given choice (lines `BUCKET<TAB>PIECE`, bytes
    // other than printable ASCII as `\xNN`, in the order of `BUCKETS`): each
    // literal takes the first listed piece it contains, as the prefilter
    // does. Its cost is the first one printed.
    if let Ok(path) = std::env::var("INIT") {
        let mut listed: Vec<(u32, usize)> = Vec::new();
        for line in std::fs::read_to_string(path).unwrap().lines() {
            let (b, piece) = line.split_once('\t').unwrap();
            let mut bytes = Vec::new();
            let mut rest = piece.as_bytes();
            while let Some((&c, tail)) = rest.split_first() {
                if c == b'\\' && tail.first() == Some(&b'x') {
                    let hex = std::str::from_utf8(&tail[1..3]).unwrap();
                    bytes.push(u8::from_str_radix(hex, 16).unwrap());
                    rest = &tail[3..];
                } else {
                    bytes.push(c);
                    rest = tail;
                }
            }
            listed.push((key(&bytes), b.parse().unwrap()));
        }
        for (i, l) in lits.iter().enumerate() {
            if let Some(&(g, _)) = listed.iter().find(|(g, _)| l.windows(4).any(|w| key(w) == *g)) {
                choice[i] = g;
            }
        }
        for (g, b) in listed {
            bucket_of.insert(g, b);
        }
    }
    let kexact: f64 = std::env::var("KEXACT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(30.0);
    let maxp: usize = std::env::var("MAXP")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    // Teddy's patterns (the prefilter's `TEDDY_LIMIT`; aho-corasick's own
    // heuristic stops at 64).
    let limit: usize = std::env::var("LIMIT")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    let cost_of = |choice: &Vec<u32>, bucket_of: &HashMap<u32, usize>| -> (f64, Vec<u64>) {
        let mut pieces: Vec<u32> = choice.clone();
        pieces.sort();
        pieces.dedup();
        let mut masks = vec![Mask::default(); nb];
        let mut sizes = vec![0usize; nb];
        let mut exact = 0u64;
        for p in &pieces {
            let b = bucket_of[p];
            masks[b].add(*p);
            sizes[b] += 1;
            exact += grams.exact.get(p).copied().unwrap_or(0);
        }
        let mut groups: Vec<std::collections::HashSet<u32>> = vec![Default::default(); nb];
        for p in &pieces {
            groups[bucket_of[p]].insert(p & 0x0f0f0f0f);
        }
        let mut g: Vec<usize> = groups.iter().map(|s| s.len()).collect();
        g.sort_unstable_by(|a, b| b.cmp(a));
        let len = g
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(k, &c)| k + (c - 1) * nb + 1)
            .max()
            .unwrap_or(0)
            .max(pieces.len());
        if len > limit {
            return (1e12 + len as f64, vec![]);
        }
        let cands: Vec<u64> = masks
            .iter()
            .zip(&sizes)
            .map(|(m, &s)| if s == 0 { 0 } else { grams.cand(m) })
            .collect();
        let c: f64 = cands
            .iter()
            .zip(&sizes)
            .map(|(&c, &s)| c as f64 * (1.0 + 0.25 * s as f64))
            .sum::<f64>()
            + kexact * exact as f64
            + if pieces.len() > maxp { 1e12 } else { 0.0 };
        (c, cands)
    };
    {
        let mut k = 0;
        for &p in &choice {
            if !bucket_of.contains_key(&p) {
                bucket_of.insert(p, k % nb);
                k += 1;
            }
        }
    }
    // lonyb groups must share a bucket: enforce by canonical bucket from first-seen
    let (mut cur, _) = cost_of(&choice, &bucket_of);
    let mut best = (cur, choice.clone(), bucket_of.clone());
    let t0 = cur * 0.05;
    for it in 0..iters {
        let temp = t0 * (1.0 - it as f64 / iters as f64).powi(2) + 1e-9;
        let mut nc = choice.clone();
        let mut nbk = bucket_of.clone();
        match rng.below(3) {
            0 => {
                let i = rng.below(lits.len());
                let p = opts[i][rng.below(opts[i].len())];
                nc[i] = p;
                if !nbk.contains_key(&p) {
                    nbk.insert(p, rng.below(nb));
                }
            }
            1 => {
                let i = rng.below(lits.len());
                nbk.insert(nc[i], rng.below(nb));
            }
            _ => {
                let i = rng.below(lits.len());
                let j = rng.below(lits.len());
                let (a, b) = (nbk[&nc[i]], nbk[&nc[j]]);
                nbk.insert(nc[i], b);
                nbk.insert(nc[j], a);
            }
        }
        // same-lonyb pieces share the bucket of the lowest gram (approximation of Teddy's rule)
        let mut ps: Vec<u32> = nc.clone();
        ps.sort();
        ps.dedup();
        let mut lon: HashMap<u32, usize> = HashMap::new();
        for p in &ps {
            let l = p & 0x0f0f0f0f;
            let b = *lon.entry(l).or_insert(nbk[p]);
            nbk.insert(*p, b);
        }
        let (c, _) = cost_of(&nc, &nbk);
        if c <= cur || rng.f() < (-(c - cur) / temp).exp() {
            cur = c;
            choice = nc;
            bucket_of = nbk;
            if cur < best.0 {
                best = (cur, choice.clone(), bucket_of.clone());
            }
        }
        if it % 2000 == 0 {
            eprintln!("it {it} cur {cur:.0} best {:.0}", best.0);
        }
    }
    let (c, choice, bucket_of) = best;
    let (_, cands) = cost_of(&choice, &bucket_of);
    let mut pieces: Vec<u32> = choice.clone();
    pieces.sort();
    pieces.dedup();
    println!("# cost {c:.0} pieces {} cands {:?}", pieces.len(), cands);
    for b in 0..nb {
        for p in &pieces {
            if bucket_of[p] == b {
                let lit_names: Vec<String> = lits
                    .iter()
                    .zip(&choice)
                    .filter(|(_, c)| *c == p)
                    .map(|(l, _)| String::from_utf8_lossy(l).into_owned())
                    .collect();
                let bytes = p.to_be_bytes();
                let esc: String = bytes
                    .iter()
                    .map(|&x| {
                        if x.is_ascii_graphic() || x == b' ' {
                            (x as char).to_string()
                        } else {
                            format!("\\x{x:02x}")
                        }
                    })
                    .collect();
                println!(
                    "{b}\t{esc}\t{}\t{:?}",
                    grams.exact.get(p).copied().unwrap_or(0),
                    lit_names
                );
            }
        }
    }
}

//! Verdict tests: one message per verdict, from the reference's formats.

use super::*;
use crate::decode_str;

fn codes(text: &str) -> Vec<String> {
    let findings = decode_str(text);
    assert_eq!(findings.len(), 1, "{text}");
    findings[0]
        .diagnosis
        .verdicts
        .iter()
        .map(|v| v.code.clone())
        .collect()
}

#[test]
fn seed_example_is_inconsistent() {
    let f = &decode_str("RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 8.00 GiB total capacity; 6.32 GiB already allocated; 1.56 GiB free; 7.88 GiB reserved in total by PyTorch)")[0];
    let v = &f.diagnosis.verdicts[0];
    assert_eq!(v.code, "inconsistent_numbers");
    assert!(
        v.detail.contains("7.88 GiB + free 1.56 GiB = 9.44 GiB"),
        "{}",
        v.detail
    );
    let size = |s: &str| crate::units::parse_size(s).unwrap();
    assert_eq!(f.diagnosis.reserved_bytes, Some(size("7.88 GiB")));
    assert_eq!(
        f.diagnosis.reserved_unallocated_bytes,
        Some(size("7.88 GiB") - size("6.32 GiB"))
    );
    assert_eq!(
        f.diagnosis.shortfall_bytes,
        Some((size("2.00 GiB") - size("1.56 GiB")) as i64)
    );
    // Fixes never suggest expandable_segments in this era.
    assert!(f
        .diagnosis
        .fixes
        .iter()
        .all(|x| !x.how.contains("expandable_segments")));
}

#[test]
fn fragmentation_when_unallocated_covers_the_request() {
    let c = codes("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.39 GiB. GPU 0 has a total capacity of 22.30 GiB of which 2.94 GiB is free. Including non-PyTorch memory, this process has 19.36 GiB memory in use. Of the allocated memory 9.83 GiB is allocated by PyTorch, and 9.20 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)");
    assert_eq!(c[0], "fragmentation");
}

#[test]
fn fragmentation_fix_fits_the_era() {
    let new = &decode_str("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.39 GiB. GPU 0 has a total capacity of 22.30 GiB of which 2.94 GiB is free. Including non-PyTorch memory, this process has 19.36 GiB memory in use. Of the allocated memory 9.83 GiB is allocated by PyTorch, and 9.20 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")[0];
    assert!(new.diagnosis.fixes[0]
        .how
        .contains("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"));
    let old = &decode_str("RuntimeError: CUDA out of memory. Tried to allocate 1.00 GiB (GPU 0; 15.90 GiB total capacity; 10.00 GiB already allocated; 500.00 MiB free; 14.50 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")[0];
    assert_eq!(old.diagnosis.verdicts[0].code, "fragmentation");
    assert!(old
        .diagnosis
        .fixes
        .iter()
        .any(|x| x.how.contains("max_split_size_mb:128")));
    assert!(old
        .diagnosis
        .fixes
        .iter()
        .all(|x| !x.how.contains("expandable_segments")));
}

#[test]
fn other_processes_named() {
    let f = &decode_str("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 512.00 MiB is free. Process 4242 has 12.00 GiB memory in use. Including non-PyTorch memory, this process has 11.10 GiB memory in use. Of the allocated memory 10.40 GiB is allocated by PyTorch, and 200.00 MiB is reserved by PyTorch but unallocated.")[0];
    assert_eq!(f.diagnosis.verdicts[0].code, "other_processes");
    assert!(f.diagnosis.verdicts[0].detail.contains("PID 4242"));
    assert_eq!(f.diagnosis.other_processes_bytes, Some(12 * GIB));
    assert!(f.diagnosis.fixes[0].how.contains("4242"));
}

#[test]
fn container_self_pid_is_not_another_process() {
    let f = &decode_str("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 14.75 GiB of which 3.06 MiB is free. Process 3258 has 14.73 GiB memory in use. Of the allocated memory 14.20 GiB is allocated by PyTorch, and 400.00 MiB is reserved by PyTorch but unallocated.")[0];
    assert_eq!(f.diagnosis.probable_self_pid, Some(3258));
    assert_eq!(f.diagnosis.other_processes_bytes, Some(0));
    let c: Vec<_> = f
        .diagnosis
        .verdicts
        .iter()
        .map(|v| v.code.as_str())
        .collect();
    assert!(!c.contains(&"other_processes"), "{c:?}");
    assert!(
        c.contains(&"fragmentation") || c.contains(&"capacity_exhausted"),
        "{c:?}"
    );
}

#[test]
fn non_pytorch_memory() {
    let c = codes("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 1.00 GiB is free. Including non-PyTorch memory, this process has 22.60 GiB memory in use. Of the allocated memory 15.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.");
    assert!(c.contains(&"non_pytorch_memory".to_string()), "{c:?}");
}

#[test]
fn memory_limit_from_allowed() {
    let c = codes("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 60.00 GiB is free. Including non-PyTorch memory, this process has 19.00 GiB memory in use. 20.00 GiB allowed; Of the allocated memory 18.00 GiB is allocated by PyTorch, and 500.00 MiB is reserved by PyTorch but unallocated.");
    assert_eq!(c[0], "memory_limit");
}

#[test]
fn invisible_limit_in_2_1() {
    let f = &decode_str("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacty of 79.15 GiB of which 60.00 GiB is free. Including non-PyTorch memory, this process has 19.00 GiB memory in use. Of the allocated memory 18.00 GiB is allocated by PyTorch, and 500.00 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")[0];
    assert_eq!(f.diagnosis.verdicts[0].code, "memory_limit");
    assert!(f.diagnosis.verdicts[0].title.starts_with("Probably"));
}

#[test]
fn request_exceeds_capacity() {
    let c = codes("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3725.29 GiB. GPU 0 has a total capacity of 23.65 GiB of which 20.00 GiB is free. Including non-PyTorch memory, this process has 3.00 GiB memory in use. Of the allocated memory 2.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.");
    assert_eq!(c, vec!["request_exceeds_capacity"]);
}

#[test]
fn capacity_exhausted() {
    let c = codes("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 100.00 MiB is free. Including non-PyTorch memory, this process has 23.54 GiB memory in use. Of the allocated memory 22.80 GiB is allocated by PyTorch, and 50.00 MiB is reserved by PyTorch but unallocated.");
    assert_eq!(c, vec!["capacity_exhausted"]);
}

#[test]
fn private_pools() {
    let c = codes("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 79.15 GiB of which 200.00 MiB is free. Including non-PyTorch memory, this process has 78.90 GiB memory in use. Of the allocated memory 77.00 GiB is allocated by PyTorch, with 6.00 GiB allocated in private pools (e.g., CUDA Graphs), and 300.00 MiB is reserved by PyTorch but unallocated.");
    assert!(c.contains(&"cuda_graph_pools".to_string()), "{c:?}");
}

#[test]
fn request_ranges() {
    let f = &decode_str("CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 4.00 GiB total capacity; 3.00 GiB already allocated; 10.00 MiB free; 3.10 GiB reserved in total by PyTorch)")[0];
    let r = f.diagnosis.request_range.as_ref().unwrap();
    assert_eq!((r.min_bytes, r.max_bytes), (MIB + 1, 20 * MIB));
    let small = &decode_str("CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 4.00 GiB total capacity; 3.00 GiB already allocated; 1.00 MiB free; 3.10 GiB reserved in total by PyTorch)")[0];
    assert_eq!(
        small.diagnosis.request_range.as_ref().unwrap().max_bytes,
        MIB
    );
}

#[test]
fn growth_between_repeated_ooms() {
    let oom = |allocated: &str| {
        format!("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 512.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 100.00 MiB is free. Of the allocated memory {allocated} is allocated by PyTorch, and 50.00 MiB is reserved by PyTorch but unallocated.\n")
    };
    let two = format!("{}step 900\n{}", oom("19.00 GiB"), oom("22.80 GiB"));
    let findings = decode_str(&two);
    assert_eq!(findings.len(), 2);
    // Two OOMs can differ because batches differ: not enough to call it growth.
    assert!(!findings[1]
        .diagnosis
        .verdicts
        .iter()
        .any(|v| v.code == "memory_growth"));
    let three = format!(
        "{}{}{}",
        oom("17.00 GiB"),
        oom("19.00 GiB"),
        oom("22.80 GiB")
    );
    let findings = decode_str(&three);
    assert!(findings[2]
        .diagnosis
        .verdicts
        .iter()
        .any(|v| v.code == "memory_growth"));
    let oscillating = format!(
        "{}{}{}",
        oom("19.00 GiB"),
        oom("17.00 GiB"),
        oom("22.80 GiB")
    );
    let findings = decode_str(&oscillating);
    assert!(!findings[2]
        .diagnosis
        .verdicts
        .iter()
        .any(|v| v.code == "memory_growth"));
}

#[test]
fn runtime_and_crash_kinds_have_verdicts_and_fixes() {
    for text in [
        "RuntimeError: CUDA error: out of memory",
        "RuntimeError: CUDA error: an illegal memory access was encountered",
        "Process finished with exit code -1073740791 (0xC0000409)",
    ] {
        let f = &decode_str(text)[0];
        assert!(!f.diagnosis.verdicts.is_empty(), "{text}");
        assert!(!f.diagnosis.fixes.is_empty(), "{text}");
    }
    let crash =
        &decode_str("RuntimeError: CUDA error: an illegal memory access was encountered")[0];
    assert!(crash.diagnosis.fixes[0]
        .how
        .contains("CUDA_LAUNCH_BLOCKING=1"));
    let windows = &decode_str("Process finished with exit code -1073740791 (0xC0000409)")[0];
    assert!(!windows.diagnosis.verdicts[0]
        .detail
        .to_lowercase()
        .contains("stack overrun occurred"));
}

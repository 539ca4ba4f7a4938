//! Verdict tests: one message per verdict, from the reference's formats.

use super::*;
use crate::decode_str;
use common::{GIB, MIB};

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
    // The 2.1 form prints no fraction limit: it is one possibility beside
    // another library in the process, never the likeliest cause.
    let why = &f.diagnosis.verdicts[0];
    assert_eq!(why.code, "free_exceeds_request");
    assert!(
        why.detail.contains("set_per_process_memory_fraction"),
        "{}",
        why.detail
    );
    assert!(
        why.detail.contains("another library in this process"),
        "{}",
        why.detail
    );
    assert!(!why.detail.contains("most likely"), "{}", why.detail);
    assert_eq!(f.diagnosis.fixes[0].id, "unprinted-limit-or-other-library");
}

/// The audited 2.1 paste (fixtures/wild/1948.txt: 2.80 GiB free for
/// 2.00 GiB on a 4 GiB card) leads with what the figures show; the same
/// figures in the 2.0 form, which would print a limit, never name it.
#[test]
fn free_beyond_the_request_names_the_unprinted_limit_only_where_it_is_unprinted() {
    let paste = include_str!("../../../../fixtures/wild/1948.txt");
    let f = &decode_str(paste)[0];
    assert_eq!(f.diagnosis.verdicts[0].code, "free_exceeds_request");
    assert!(!f.diagnosis.verdicts[0].title.contains("limit"));
    assert_eq!(f.diagnosis.fixes[0].id, "unprinted-limit-or-other-library");
    let zh = f.diagnosis.fixes[0].zh.as_ref().expect("Chinese");
    assert!(zh.text.contains("显存"), "{}", zh.text);
    let two_oh = &decode_str("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB (GPU 0; 4.00 GiB total capacity; 0 bytes already allocated; 2.80 GiB free; 0 bytes reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")[0];
    assert_eq!(two_oh.diagnosis.verdicts[0].code, "free_exceeds_request");
    assert!(!two_oh.diagnosis.verdicts[0]
        .detail
        .contains("set_per_process_memory_fraction"));
    assert!(two_oh
        .diagnosis
        .fixes
        .iter()
        .all(|x| x.id != "unprinted-limit-or-other-library"));
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

/// The families whose messages state their own numbers outside PyTorch's
/// CUDA allocator.
mod framework_kinds {
    use super::codes;
    use crate::decode_str;

    #[test]
    fn mps_limit_vs_machine() {
        // 9.57 + 17.35 GiB + 292.50 MiB = 27.206 GiB > 27.20 GiB max allowed.
        let c = codes("RuntimeError: MPS backend out of memory (MPS allocated: 9.57 GiB, other allocations: 17.35 GiB, max allowed: 27.20 GiB). Tried to allocate 292.50 MiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).");
        assert_eq!(c[0], "mps_high_watermark");
        // 2 + 1 + 1 = 4 GB < 18.13 GB: macOS refused, not the limit.
        let c = codes("RuntimeError: MPS backend out of memory (MPS allocated: 2.00 GB, other allocations: 1.00 GB, max allowed: 18.13 GB). Tried to allocate 1.00 GB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).");
        assert_eq!(c[0], "unified_memory_exhausted");
        let c = codes("RuntimeError: MPS backend out of memory (MPS allocated: 42.28 GiB, other allocations: 720.00 KiB). Tried to allocate 1.00 GiB on private pool.");
        assert_eq!(c[0], "unified_memory_exhausted");
    }

    /// A Hugging Face seq2seq run on an M2 whose memory grew "like a memory
    /// leak" for ~1,300 steps (a user's forum post): other allocations
    /// dwarf PyTorch's own, so the graph and buffer caches lead, not the limit.
    const MPS_OTHER_GROWS: &str = "RuntimeError: MPS backend out of memory (MPS allocated: 4.20 GiB, other allocations: 43.49 GiB, max allowed: 47.74 GiB). Tried to allocate 51.44 MiB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).";

    #[test]
    fn mps_other_allocations_lead_when_they_dominate() {
        let f = &decode_str(MPS_OTHER_GROWS)[0];
        let d = &f.diagnosis;
        assert_eq!(d.verdicts[0].code, "non_pytorch_memory");
        assert!(d.verdicts[0].detail.contains("MPSGraph"));
        // The limit is still stated, after the cause.
        assert!(d.verdicts.iter().any(|v| v.code == "mps_high_watermark"));
        assert_eq!(d.fixes[0].id, "mps-fixed-input-shapes");
        let pos = |id: &str| d.fixes.iter().position(|x| x.id == id);
        assert_eq!(pos("mps-high-watermark-ratio"), Some(d.fixes.len() - 1));
        assert!(pos("mps-make-workload-smaller") > pos("mps-empty-cache"));
    }

    #[test]
    fn mps_other_dominates_margin() {
        // The same message with other allocations at exactly 4× and just
        // under 4× 4.00 GiB in PyTorch's allocator (the ratio margin), then at 1 GiB and
        // just under it against a small allocation (the size margin).
        let with = |own: &str, other: &str| {
            codes(
                &MPS_OTHER_GROWS
                    .replace("4.20 GiB", own)
                    .replace("43.49 GiB", other),
            )[0]
            .clone()
        };
        assert_eq!(with("4.00 GiB", "16.00 GiB"), "non_pytorch_memory");
        assert_eq!(with("4.00 GiB", "15.99 GiB"), "unified_memory_exhausted");
        assert_eq!(with("100.00 MiB", "1.00 GiB"), "non_pytorch_memory");
        assert_eq!(
            with("100.00 MiB", "1023.00 MiB"),
            "unified_memory_exhausted"
        );
    }

    #[test]
    fn mps_fix_warns_about_the_ratio() {
        let f = &decode_str("RuntimeError: MPS backend out of memory (MPS allocated: 8.89 GB, other allocations: 172.98 MB, max allowed: 9.07 GB). Tried to allocate 6.25 MB on private pool. Use PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 to disable upper limit for memory allocations (may cause system failure).")[0];
        assert_eq!(f.diagnosis.verdicts[0].code, "mps_high_watermark");
        let ratio = f
            .diagnosis
            .fixes
            .iter()
            .find(|x| x.how.contains("PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0"))
            .unwrap();
        assert!(ratio.how.contains("freeze"));
        assert!(ratio.how.contains("0.7"));
    }

    #[test]
    fn implausible_host_request_margin() {
        // A model merge of an SDXL with an SD1.5 checkpoint on a 32 GB
        // machine (a user's paste): 312.50 GiB for one tensor.
        let msg = |n: u64| {
            format!("RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate {n} bytes. Error code 12 (Cannot allocate memory)")
        };
        let f = &decode_str(&msg(335_544_320_000))[0];
        assert_eq!(f.diagnosis.verdicts[0].code, "request_exceeds_capacity");
        assert!(f.diagnosis.verdicts[0].title.contains("implausible"));
        assert!(!f
            .diagnosis
            .fixes
            .iter()
            .any(|x| x.id == "allocate-less-at-once"));
        // 256 GiB, the margin, and one byte under it.
        assert_eq!(codes(&msg(256 << 30))[0], "request_exceeds_capacity");
        assert_eq!(codes(&msg((256 << 30) - 1))[0], "host_ram_exhausted");
        // 4 TiB and above: no machine at all.
        let f = &decode_str(&msg(4 << 40))[0];
        assert!(f.diagnosis.verdicts[0].title.contains("any machine"));
        let f = &decode_str(&msg((4 << 40) - 1))[0];
        assert!(f.diagnosis.verdicts[0].title.contains("implausible"));
    }

    #[test]
    fn host_verdicts() {
        assert_eq!(codes("RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 8000000000000 bytes. Error code 12 (Cannot allocate memory)")[0], "request_exceeds_capacity");
        assert_eq!(codes("RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate 34359738368 bytes. Error code 12 (Cannot allocate memory)")[0], "host_ram_exhausted");
        assert_eq!(codes("Out of memory: Killed process 48213 (python) total-vm:98765432kB, anon-rss:61234567kB, file-rss:0kB, shmem-rss:0kB")[0], "host_ram_exhausted");
        assert_eq!(codes("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=2003702.batch. Some of your processes may have been killed by the cgroup out-of-memory handler.")[0], "host_memory_limit");
        let f = &decode_str("trainer-1 exited with code 137")[0];
        assert_eq!(f.diagnosis.verdicts[0].code, "killed_by_sigkill");
        assert!(f.diagnosis.verdicts[0].detail.contains("circumstantial"));
        assert_eq!(f.category, crate::record::Category::LikelyOom);
    }

    #[test]
    fn framework_verdicts() {
        assert_eq!(codes("ResourceExhaustedError: OOM when allocating tensor with shape[8,512,512,64] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc")[0], "capacity_exhausted");
        assert_eq!(codes("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 7406166528 bytes.")[0], "xla_preallocation");
        assert_eq!(codes("XlaRuntimeError: RESOURCE_EXHAUSTED: Out of host memory while trying to allocate 68719476736 bytes. Please set the environment variable XLA_PJRT_GPU_HOST_MEMORY_LIMIT_GB to allocate larger host memory than the default 64 GB.")[0], "xla_host_memory_limit");
        assert_eq!(codes("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 3,758,096,384 bytes, limit set to: 4,294,967,296 bytes).")[0], "memory_limit");
        assert_eq!(codes("cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 1,073,741,824 bytes (allocated so far: 2,147,483,648 bytes).")[0], "capacity_exhausted");
        assert_eq!(codes("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.")[0], "kv_cache_too_small");
    }

    #[test]
    fn xpu_gets_no_cuda_advice() {
        for text in [
            "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 15.11 GiB of which 1.02 GiB is free. Of the allocated memory 9.80 GiB is allocated by PyTorch, and 3.90 GiB is reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.",
            "RuntimeError: DPCPP out of memory. Tried to allocate 186.00 MiB (GPU 0; 15.56 GiB total capacity; 12.00 GiB already allocated; 13.00 GiB reserved in total by PyTorch)",
        ] {
            let f = &decode_str(text)[0];
            assert!(!f.diagnosis.fixes.is_empty());
            for x in &f.diagnosis.fixes {
                assert!(!x.how.contains("PYTORCH_CUDA_ALLOC_CONF="), "{}", x.how);
                assert!(!x.how.contains("nvidia-smi"), "{}", x.how);
                assert!(!x.how.contains("device_type=\"cuda\""), "{}", x.how);
            }
        }
    }
}

/// Out-of-memory errors under another name, crashes and consequences.
mod likely_oom_kinds {
    use super::super::xid::xid_info;
    use super::*;
    use crate::decode_str;

    fn only(text: &str) -> Finding {
        let mut findings = decode_str(text);
        assert_eq!(findings.len(), 1, "{text}: {findings:#?}");
        findings.remove(0)
    }

    fn codes(f: &Finding) -> Vec<&str> {
        f.diagnosis
            .verdicts
            .iter()
            .map(|v| v.code.as_str())
            .collect()
    }

    #[test]
    fn masked_ooms_say_so_and_how_to_confirm() {
        for text in [
            "RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`",
            "host:1:2 [0] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 6291456 bytes",
            r#"RuntimeError: NVML_SUCCESS == r INTERNAL ASSERT FAILED at "../c10/cuda/CUDACachingAllocator.cpp":830, please report a bug to PyTorch. "#,
            "RuntimeError: CUDA driver error: device not ready",
        ] {
            let f = only(text);
            assert_eq!(f.category, crate::record::Category::LikelyOom, "{text}");
            let v = &f.diagnosis.verdicts[0];
            assert_eq!(v.code, "masked_oom");
            // An *_ALLOC_FAILED status is the library's own out-of-memory
            // report: never "not an out-of-memory message".
            if text.contains("ALLOC_FAILED") {
                assert!(!v.title.contains("Not an out-of-memory"), "{}", v.title);
            } else {
                assert!(v.title.contains("Not a") || v.title.contains("Not an"), "{}", v.title);
            }
            assert!(v.detail.contains("To confirm"), "{}", v.detail);
            assert!(!f.diagnosis.fixes.is_empty());
        }
    }

    /// A library status follows the framework the paste shows. The ONNX
    /// Runtime line is a real Deep-Live-Cam user's paste (wild case 2260);
    /// "... when calling `cublasCreate(handle)`" is PyTorch's own wording.
    #[test]
    fn library_status_follows_the_framework_the_paste_shows() {
        let ort = only(
            r"onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Gemm node. Name:'fc1' Status Message: D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_call.cc:121 onnxruntime::CudaCall D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_call.cc:114 onnxruntime::CudaCall CUBLAS failure 3: CUBLAS_STATUS_ALLOC_FAILED ; GPU=0 ; hostname=TOBI ; file=D:\a\_work\1\s\onnxruntime\core\providers\cuda\cuda_execution_provider.cc ; line=168 ; expr=cublasCreate(&cublas_handle_);",
        );
        let v = &ort.diagnosis.verdicts[0];
        assert!(!v.title.contains("Not an out-of-memory"), "{}", v.title);
        assert!(
            !v.detail.contains("PyTorch") && !v.detail.contains("torch."),
            "{}",
            v.detail
        );
        assert!(v.detail.contains("ONNX Runtime"), "{}", v.detail);
        assert_eq!(ort.diagnosis.fixes[0].title, "Bound ONNX Runtime's arena");
        for fix in &ort.diagnosis.fixes {
            assert!(!fix.how.contains("torch."), "{}", fix.how);
        }

        let torch = only("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`");
        assert!(torch.diagnosis.verdicts[0]
            .detail
            .contains("PyTorch's cache"));

        // No framework shown: no framework's cache is blamed.
        let bare = only("CUBLAS_STATUS_ALLOC_FAILED");
        let v = &bare.diagnosis.verdicts[0];
        assert!(
            !v.detail.contains("PyTorch") && !v.detail.contains("torch."),
            "{}",
            v.detail
        );
    }

    /// A runtime's out-of-memory code with no framework shown (a real ROCm
    /// user's sentence, wild case 2407) says what the code means for any
    /// program and leads with what holds the GPU; TensorFlow's own log line
    /// (its stream executor's wording) keeps the preallocation fix.
    #[test]
    fn runtime_oom_code_assumes_no_framework_the_paste_does_not_show() {
        let hip = only("After that whenever I try to run I just get `hipErrorOutOfMemory`");
        let v = &hip.diagnosis.verdicts[0];
        assert!(
            !v.detail.contains("TensorFlow") && !v.detail.contains("JAX"),
            "{}",
            v.detail
        );
        assert_eq!(hip.diagnosis.fixes[0].title, "Free the GPU");
        assert!(hip.diagnosis.fixes[0].how.contains("rocm-smi"));

        let tf = only("2019-05-05 18:19:37.106546: E tensorflow/stream_executor/cuda/cuda_driver.cc:806] failed to allocate 3.77G (4046864384 bytes) from device: CUDA_ERROR_OUT_OF_MEMORY: out of memory");
        assert_eq!(
            tf.diagnosis.fixes[0].title,
            "Stop frameworks from reserving the whole GPU"
        );
    }

    #[test]
    fn device_assert_verdicts() {
        let f = only("/pytorch/aten/src/ATen/native/cuda/Indexing.cu:1146: indexSelectLargeIndex: block: [0,0,0], thread: [0,0,0] Assertion `srcIndex < srcSelectDimSize` failed.\nRuntimeError: CUDA error: device-side assert triggered\n");
        assert_eq!(codes(&f), ["index_out_of_range"]);
        assert!(f.diagnosis.verdicts[0].detail.contains("vocabulary"));
        let g = only("Loss.cu:94: operator(): block: [0,0,0], thread: [0,0,0] Assertion `input_val >= zero && input_val <= one` failed.\n");
        assert_eq!(codes(&g), ["device_assert"]);
        let h = only("RuntimeError: CUDA error: device-side assert triggered\n");
        assert_eq!(codes(&h), ["device_assert"]);
    }

    #[test]
    fn consequences_point_at_the_oom() {
        let log = "[rank1]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.02 GiB is free. Including non-PyTorch memory, this process has 78.11 GiB memory in use. Of the allocated memory 75.20 GiB is allocated by PyTorch, and 1.40 GiB is reserved by PyTorch but unallocated.\n[rank0]:[E ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600030 milliseconds before timing out.\n[rank0]: next\n";
        let findings = decode_str(log);
        assert_eq!(findings.len(), 2, "{findings:#?}");
        let timeout = &findings[1];
        assert_eq!(timeout.kind, Kind::NcclTimeout);
        assert_eq!(timeout.consequence_of, Some(1));
        assert_eq!(codes(timeout), ["collateral_timeout"]);
        assert!(timeout.diagnosis.verdicts[0].detail.contains("finding [1]"));
        assert!(timeout.diagnosis.fixes[0].title.contains("[1]"));
    }

    #[test]
    fn consequences_alone_blame_no_one() {
        let f = only("[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=668, OpType=ALLREDUCE, NumelIn=52, NumelOut=52, Timeout(ms)=600000) ran for 600097 milliseconds before timing out.");
        assert_eq!(f.consequence_of, None);
        assert_eq!(codes(&f), ["collective_timeout"]);
    }

    #[test]
    fn xid_codes() {
        let f = only(
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
        );
        assert_eq!(codes(&f), ["xid_error", "hardware_fault"]);
        assert!(headline(&f).contains("fallen off the bus"));
        let g = only("NVRM: Xid (PCI:0000:3b:00): 13, pid=1234, name=python, Graphics Exception: ESR 0x50df30=0x107000e");
        assert_eq!(codes(&g), ["xid_error"]);
        let h = only("NVRM: Xid (PCI:0000:3b:00): 150, pid=1, something");
        assert_eq!(codes(&h), ["xid_error"]);
        assert!(h.diagnosis.verdicts[0].detail.contains("does not describe"));
        for code in [
            "13", "31", "43", "45", "48", "63", "64", "74", "79", "92", "94", "95", "119",
        ] {
            assert!(xid_info(code).is_some(), "{code}");
        }
    }

    #[test]
    fn every_kind_has_a_headline_verdict_and_fix() {
        for text in [
            "RuntimeError: CUDA error: misaligned address",
            "RuntimeError: CUDA error: unspecified launch failure",
            "RuntimeError: CUDA error: no kernel image is available for execution on the device",
            "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1331, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
            "torch.distributed.DistBackendError: NCCL communicator was aborted on rank 2.",
            "Process finished with exit code -1073741819 (0xC0000005)",
            "OSError: [WinError 1455] The paging file is too small for this operation to complete. Error loading \"C:\\x\\torch\\lib\\cudnn_cnn_infer64_8.dll\" or one of its dependencies.",
            "RuntimeError: CUDA failed with error out of memory",
            "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 98304, Hardware limit: 65536. Reducing block sizes or `num_stages` may help.",
        ] {
            let f = only(text);
                        assert!(!headline(&f).is_empty(), "{text}");
            assert!(!f.diagnosis.verdicts.is_empty(), "{text}");
            assert!(!f.diagnosis.fixes.is_empty(), "{text}");
        }
    }

    #[test]
    fn every_code_has_a_long_explanation() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/explanations");
        let slugs = Kind::ALL.iter().map(|k| k.slug());
        for code in slugs.chain(crate::explain::VERDICT_CODES.iter().copied()) {
            let path = dir.join(format!("{code}.md"));
            assert!(path.is_file(), "missing {}", path.display());
            // The English page: the file up to its `<!-- zh -->` line.
            let (found, text) = crate::explain::docs::lookup(code).unwrap();
            assert_eq!(found, code);
            assert!(text.starts_with(&format!("# {code}: ")), "{code}");
            assert!(!text.contains("<!-- zh -->"), "{code}");
            for section in [
                "## Example",
                "## Why it happens",
                "## How to fix it",
                "## Read more",
            ] {
                assert!(text.contains(section), "{code}: {section}");
            }
        }
    }
}

/// Verdicts weigh the size of their evidence; fixes fit the framework,
/// engine, vendor, phase and release. Messages follow the printed formats.
mod fit {
    use crate::decode_str;

    fn finding(text: &str) -> crate::record::Finding {
        let mut findings = decode_str(text);
        assert_eq!(findings.len(), 1, "{text}");
        findings.remove(0)
    }
    fn has(text: &str, code: &str) -> bool {
        finding(text)
            .diagnosis
            .verdicts
            .iter()
            .any(|v| v.code == code)
    }
    fn fixes(text: &str) -> String {
        finding(text)
            .diagnosis
            .fixes
            .iter()
            .map(|f| format!("{}: {}\n", f.title, f.how))
            .collect()
    }
    /// A 2.2+ message without a process line.
    fn modern(req: &str, total: &str, free: &str, alloc: &str, unused: &str) -> String {
        format!("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of {total} of which {free} is free. Of the allocated memory {alloc} is allocated by PyTorch, and {unused} is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
    }

    #[test]
    fn free_exceeds_request_needs_more_than_noise() {
        // 1 GiB request: the margin is 5 % of it (51.2 MiB).
        let below = modern(
            "1.00 GiB",
            "23.65 GiB",
            "1.04 GiB",
            "20.00 GiB",
            "100.00 MiB",
        );
        let above = modern(
            "1.00 GiB",
            "23.65 GiB",
            "1.06 GiB",
            "20.00 GiB",
            "100.00 MiB",
        );
        assert!(!has(&below, "free_exceeds_request"));
        assert!(has(&above, "free_exceeds_request"));
        // 100 MiB request: the margin is 32 MiB.
        let below = modern(
            "100.00 MiB",
            "23.65 GiB",
            "130.00 MiB",
            "20.00 GiB",
            "100.00 MiB",
        );
        let above = modern(
            "100.00 MiB",
            "23.65 GiB",
            "134.00 MiB",
            "20.00 GiB",
            "100.00 MiB",
        );
        assert!(!has(&below, "free_exceeds_request"));
        assert!(has(&above, "free_exceeds_request"));
        // It explains none of the shortfall: never ranked first.
        let f = finding(&above);
        assert_ne!(f.diagnosis.verdicts[0].code, "free_exceeds_request");
    }

    fn limited(req: &str, free: &str, reserved: &str) -> String {
        format!("RuntimeError: CUDA out of memory. Tried to allocate {req} (GPU 0; 23.65 GiB total capacity; 10.00 GiB already allocated; {free} free; 12.00 GiB allowed; {reserved} reserved in total by PyTorch)")
    }

    #[test]
    fn memory_limit_needs_more_than_noise_or_room_on_the_device() {
        // 11.90 GiB + 100 MiB is within 32 MiB of 12 GiB and the device is full.
        assert!(!has(
            &limited("100.00 MiB", "50.00 MiB", "11.90 GiB"),
            "memory_limit"
        ));
        // 11.90 GiB + 200 MiB is over by ~97 MiB.
        assert!(has(
            &limited("200.00 MiB", "50.00 MiB", "11.90 GiB"),
            "memory_limit"
        ));
        // Within the noise, but the device had room: only the limit can refuse.
        assert!(has(
            &limited("100.00 MiB", "1.00 GiB", "11.90 GiB"),
            "memory_limit"
        ));
    }

    #[test]
    fn fragmentation_needs_a_share_of_reserved_and_a_large_pool_request() {
        // 400 MiB of 10 GiB reserved is 3.9 %: slack, not fragmentation.
        let slack = modern(
            "200.00 MiB",
            "12.00 GiB",
            "100.00 MiB",
            "9.61 GiB",
            "400.00 MiB",
        );
        assert!(!has(&slack, "fragmentation"));
        // 600 MiB of ~9.6 GiB is 6 %.
        let frag = modern(
            "200.00 MiB",
            "12.00 GiB",
            "100.00 MiB",
            "9.02 GiB",
            "600.00 MiB",
        );
        assert!(has(&frag, "fragmentation"));
        // A 2 MiB small-pool request cannot use free space in large segments.
        let small = modern(
            "2.00 MiB",
            "12.00 GiB",
            "1.00 MiB",
            "9.02 GiB",
            "600.00 MiB",
        );
        assert!(!has(&small, "fragmentation"));
    }

    fn with_process(free: &str, process: &str) -> String {
        format!("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 8.00 GiB of which {free} is free. Including non-PyTorch memory, this process has {process} memory in use. Of the allocated memory 5.00 GiB is allocated by PyTorch, and 20.00 MiB is reserved by PyTorch but unallocated.")
    }

    #[test]
    fn memory_outside_this_process_is_derived_shown_and_ranked() {
        // 8 − 0.02 − 7.03 = 0.95 GiB: below 1 GiB.
        assert!(!has(
            &with_process("20.00 MiB", "7.03 GiB"),
            "memory_outside_process"
        ));
        // 8 − 0.02 − 5.60 = 2.38 GiB: the main cause.
        let text = with_process("20.00 MiB", "5.60 GiB");
        let f = finding(&text);
        assert_eq!(f.diagnosis.verdicts[0].code, "memory_outside_process");
        let rows = crate::explain::field_rows(&f);
        let row = rows
            .iter()
            .find(|r| r.label == "Outside this process (derived)")
            .expect("derived row");
        assert_eq!(row.value, "2.38 GiB");
    }

    /// A vLLM start-up on a 44.40 GiB card (a user's paste): total − free −
    /// this process is 1 byte, an artefact of the printed rounding.
    #[test]
    fn a_derived_figure_within_rounding_of_zero_is_about_zero() {
        let text = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 33.75 GiB. GPU 0 has a total capacity of 44.40 GiB of which 26.88 GiB is free. Including non-PyTorch memory, this process has 17.52 GiB memory in use. Of the allocated memory 17.03 GiB is allocated by PyTorch, and 6.95 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";
        let f = finding(text);
        let rows = crate::explain::field_rows(&f);
        let row = rows
            .iter()
            .find(|r| r.label == "Outside this process (derived)")
            .expect("derived row");
        assert_eq!(row.value, "≈ 0");
        // The margin: the inputs' combined rounding, on both sides.
        let inputs = [44 * crate::units::GIB, 512 * crate::units::MIB];
        let slack = i128::from(crate::units::GIB / 200 + 1 + crate::units::MIB / 200 + 1);
        let derived = |v: i128| super::super::common::format_derived(v, &inputs);
        assert_eq!(derived(slack), "≈ 0");
        assert_eq!(derived(-slack), "≈ 0");
        assert_ne!(derived(slack + 1), "≈ 0");
        assert_ne!(derived(-slack - 1), "≈ 0");
    }

    /// A 2 GiB card in PyTorch ≤1.3's "cached" form (a user's paste): the
    /// cache plus free memory (413.85 MiB) covers the 288 MiB request with
    /// less than half of it to spare, so the live tensors and the batch size lead, and
    /// fragmentation is one possibility after them.
    #[test]
    fn a_barely_covering_cache_on_a_small_card_does_not_lead() {
        let msg = |total: &str, free: &str| {
            format!("RuntimeError: CUDA out of memory. Tried to allocate 288.00 MiB (GPU 0; {total} total capacity; 849.59 MiB already allocated; {free} free; 326.41 MiB cached)")
        };
        let first = |total: &str, free: &str| {
            finding(&msg(total, free)).diagnosis.verdicts[0]
                .code
                .clone()
        };
        let f = finding(&msg("2.00 GiB", "87.44 MiB"));
        assert_ne!(f.diagnosis.verdicts[0].code, "fragmentation");
        assert!(f
            .diagnosis
            .verdicts
            .iter()
            .any(|v| v.code == "fragmentation"));
        assert_eq!(f.diagnosis.fixes[0].id, "reduce-batch-size");
        // 1.5 times the request (432 MiB) is the margin, on both sides.
        assert_eq!(first("2.00 GiB", "105.60 MiB"), "fragmentation");
        assert_ne!(first("2.00 GiB", "105.58 MiB"), "fragmentation");
        // The card's size is the other margin: above 8 GiB the cache leads.
        assert_eq!(first("8.01 GiB", "87.44 MiB"), "fragmentation");
        assert_ne!(first("8.00 GiB", "87.44 MiB"), "fragmentation");
    }

    #[test]
    fn does_not_fit_only_when_the_numbers_say_so() {
        let msg = |reserved: &str, free: &str| {
            format!("RuntimeError: CUDA out of memory. Tried to allocate 128.00 MiB (GPU 0; 40.00 GiB total capacity; {reserved} already allocated; {free} free; {reserved} reserved in total by PyTorch)")
        };
        // 19.80 GiB + 128 MiB < 20 GiB, half the card.
        let little = msg("19.80 GiB", "19.90 GiB");
        assert!(!has(&little, "capacity_exhausted"));
        assert!(has(&little, "numbers_inconclusive"));
        let half = msg("20.00 GiB", "19.70 GiB");
        assert!(!has(&half, "numbers_inconclusive"));
        // Both sides hold free memory far beyond the request: never "does not fit".
        assert!(!has(&half, "capacity_exhausted"));
        assert!(has(&half, "free_exceeds_request"));
        // Live tensors fill 75 % of the card and free is within the noise of
        // the request: it does not fit.
        let full = msg("30.00 GiB", "150.00 MiB");
        assert!(has(&full, "capacity_exhausted"));
        assert!(!has(&full, "numbers_inconclusive"));
    }

    /// CUDA-graph pools are a cause from 1 GiB, or from 256 MiB when they
    /// could have served the request; a few MiB parked there are not.
    #[test]
    fn graph_pools_are_blamed_only_when_they_matter() {
        let msg = |req: &str, pools: &str| {
            format!("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU 0 has a total capacity of 79.15 GiB of which 20.00 MiB is free. Including non-PyTorch memory, this process has 78.90 GiB memory in use. Of the allocated memory 77.00 GiB is allocated by PyTorch, with {pools} allocated in private pools (e.g., CUDA Graphs), and 300.00 MiB is reserved by PyTorch but unallocated.")
        };
        assert!(!has(&msg("16.00 MiB", "17.00 MiB"), "cuda_graph_pools"));
        assert!(!has(&msg("200.00 MiB", "255.00 MiB"), "cuda_graph_pools"));
        assert!(has(&msg("200.00 MiB", "256.00 MiB"), "cuda_graph_pools"));
        assert!(!has(&msg("2.00 GiB", "1023.00 MiB"), "cuda_graph_pools"));
        assert!(has(&msg("2.00 GiB", "1.00 GiB"), "cuda_graph_pools"));
        // Where pools are blamed beside live tensors filling the card and a
        // small shortfall, the tensors come first: 1 GiB is not a tenth of 79.
        let f = finding(&msg("200.00 MiB", "1.00 GiB"));
        assert_eq!(f.diagnosis.verdicts[0].code, "capacity_exhausted");
    }

    /// Unused reserve and free memory that together cover the request mean
    /// the memory exists, only not in one block: live tensors plus the
    /// request fit in the card less what is held outside it
    /// (`Reading::CacheCoversRequest`), so fragmentation leads and its fix
    /// comes first, with the workload's after it (live tensors fill 81 % of
    /// the card). The margin is the free-memory margin: 5 % of the request
    /// (102.40 MiB), at least 32 MiB.
    #[test]
    fn split_memory_that_covers_the_request_with_free_memory_leads() {
        // 2.00 GiB request; 1.46 GiB unused reserve; 12.95 GiB live tensors
        // (81 % of 15.90 GiB); what is left outside PyTorch stays under 1 GiB.
        let msg = |free: &str| modern("2.00 GiB", "15.90 GiB", free, "12.95 GiB", "1.46 GiB");
        // 1495.04 MiB + 656 MiB = 2151.04 MiB ≥ 2048 + 102.40 MiB.
        let split = finding(&msg("656.00 MiB"));
        assert_eq!(split.diagnosis.verdicts[0].code, "fragmentation");
        assert!(!has(&msg("656.00 MiB"), "capacity_exhausted"));
        let fixes: Vec<&str> = split
            .diagnosis
            .fixes
            .iter()
            .map(|x| x.title.as_str())
            .collect();
        assert_eq!(
            fixes[0], "Let the allocator grow segments instead of fragmenting them",
            "{fixes:?}"
        );
        assert!(fixes.contains(&"Reduce the batch size"), "{fixes:?}");
        // 1495.04 MiB + 655 MiB = 2150.04 MiB: within the margin, it does not fit.
        let short = finding(&msg("655.00 MiB"));
        assert_eq!(short.diagnosis.verdicts[0].code, "capacity_exhausted");
        assert!(!has(&msg("655.00 MiB"), "fragmentation"));
    }

    /// With a small shortfall every cause covers it: a specific cause leads
    /// only when it holds a tenth of the card.
    #[test]
    fn a_specific_cause_leads_only_when_it_holds_a_tenth_of_the_card() {
        let msg = |other: &str| {
            format!("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 10.00 MiB is free. Process 1234 has {other} memory in use. Including non-PyTorch memory, this process has 21.20 GiB memory in use. Of the allocated memory 20.50 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.")
        };
        // 2.40 GiB ≥ 23.65 GiB / 10: the other process leads.
        let big = finding(&msg("2.40 GiB"));
        assert_eq!(big.diagnosis.verdicts[0].code, "other_processes");
        assert!(has(&msg("2.40 GiB"), "capacity_exhausted"));
        // 2.30 GiB < 2.365 GiB: live tensors (87 % of the card) lead.
        let small = finding(&msg("2.30 GiB"));
        assert_eq!(small.diagnosis.verdicts[0].code, "capacity_exhausted");
        assert!(has(&msg("2.30 GiB"), "other_processes"));
    }

    /// A fix names an API only where the message's PyTorch has it:
    /// set_per_process_memory_fraction came with 1.8, so PyTorch 0.4's
    /// `cuda runtime error (2)` is told to empty the cache instead.
    #[test]
    fn the_memory_fraction_cap_is_offered_only_from_1_8() {
        let old = fixes("RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCCachingHostAllocator.cpp:265");
        assert!(
            old.contains("Empty PyTorch's cache before the library call"),
            "{old}"
        );
        assert!(
            !old.contains("set_per_process_memory_fraction(0.9)"),
            "{old}"
        );
        let new = fixes("RuntimeError: CUDA error: out of memory\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.");
        assert!(
            new.contains("set_per_process_memory_fraction(0.9)"),
            "{new}"
        );
    }

    /// A request of 1 TiB or more with no device size is a wrong size, not
    /// memory pressure, in any stack (ONNX Runtime asked for 4 EiB).
    #[test]
    fn a_request_larger_than_any_gpu_is_a_wrong_size_in_every_stack() {
        let ort = |bytes: u64| {
            format!("onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'Conv_3' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size {bytes}")
        };
        let huge = finding(&ort(4_585_490_524_328_388_608));
        assert_eq!(huge.diagnosis.verdicts[0].code, "request_exceeds_capacity");
        assert_eq!(
            huge.diagnosis.fixes[0].title,
            "Find the tensor that is far too large"
        );
        // The largest accelerators have 288 GB: above it, a wrong size...
        assert!(has(&ort(288_000_000_001), "request_exceeds_capacity"));
        assert!(finding(&ort(288_000_000_001)).diagnosis.verdicts[0]
            .title
            .contains("larger than any GPU"));
        // ...above 192 GB, one only the few largest could hold, read the same
        // way and said so...
        let nearly = finding(&ort(288_000_000_000));
        assert_eq!(
            nearly.diagnosis.verdicts[0].code,
            "request_exceeds_capacity"
        );
        assert!(nearly.diagnosis.verdicts[0]
            .title
            .contains("larger than nearly any GPU"));
        assert!(has(&ort(192_000_000_001), "request_exceeds_capacity"));
        // ...and up to 192 GB, a size some GPU holds.
        assert!(!has(&ort(192_000_000_000), "request_exceeds_capacity"));
    }

    /// PyTorch's message cut right after the request (fixtures/wild/2006.txt):
    /// a single request larger than nearly every GPU is readable without the
    /// figures that were cut, and leads; no workload fix is offered.
    #[test]
    fn an_oversized_request_leads_in_a_message_cut_before_its_figures() {
        let cut = |size: &str| {
            format!("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate {size}")
        };
        let f = finding(&cut("218.96 GiB"));
        assert_eq!(f.diagnosis.verdicts[0].code, "request_exceeds_capacity");
        assert_eq!(
            f.diagnosis.fixes[0].title,
            "Find the tensor that is far too large"
        );
        let all = fixes(&cut("218.96 GiB"));
        assert!(!all.contains("Find the whole message"), "{all}");
        assert!(!all.contains("Reduce the batch size"), "{all}");
        // 192 GB is 178.81 GiB: on both sides of that margin.
        assert!(has(&cut("178.82 GiB"), "request_exceeds_capacity"));
        assert_eq!(
            finding(&cut("178.80 GiB")).diagnosis.verdicts[0].code,
            "figures_missing"
        );
    }

    /// OpenVINO's GPU plugin asking for 2^61 bytes (fixtures/wild/2046.txt):
    /// the impossible size outranks the message's own remedy (a smaller
    /// batch, a lower precision), and the OpenVINO way to find it (static or
    /// bounded shapes) leads.
    #[test]
    fn an_impossible_size_outranks_the_messages_own_remedy() {
        let openvino = |bytes: u64| {
            format!("Exception from src\\inference\\src\\cpp\\infer_request.cpp:223:\nCheck '!exceed_allocatable_mem_size' failed at src\\plugins\\intel_gpu\\src\\runtime\\ocl\\ocl_engine.cpp:115:\n[GPU] Exceeded max size of memory object allocation: requested {bytes} bytes, but max alloc size supported by device is 4294959104 bytes.Please try to reduce batch size or use lower precision.")
        };
        let f = finding(&openvino(2_305_843_008_391_495_680));
        assert_eq!(f.diagnosis.verdicts[0].code, "request_exceeds_capacity");
        let ids: Vec<&str> = f.diagnosis.fixes.iter().map(|x| x.id.as_str()).collect();
        assert_eq!(
            ids,
            ["find-oversized-tensor", "do-what-the-message-suggests"]
        );
        assert!(f.diagnosis.fixes[0].how.contains("model.reshape"));
        assert!(!f.diagnosis.fixes[1].how.contains("try that first"));
        // A size some GPU holds: the message's own remedy leads, as before.
        let fits = finding(&openvino(8_000_000_000));
        assert_eq!(fits.diagnosis.fixes[0].id, "do-what-the-message-suggests");
    }

    /// The kernel's out-of-memory killer picks the largest process it may
    /// kill: a victim with less than 64 MiB (own plus shared pages) is not
    /// what filled the machine, and its own fixes would shrink the wrong one.
    #[test]
    fn a_small_oom_killer_victim_points_elsewhere() {
        let dmesg = |anon_kb: u64| {
            format!("[1234567.890123] Out of memory: Killed process 7748 (python) total-vm:12907828kB, anon-rss:{anon_kb}kB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:23000kB oom_score_adj:0")
        };
        let small = finding(&dmesg(4096));
        assert!(small.diagnosis.verdicts[0]
            .detail
            .contains("The victim held only 4.00 MiB"));
        assert_eq!(small.diagnosis.fixes[0].title, "Find what holds the RAM");
        assert!(!fixes(&dmesg(4096)).contains("DataLoader workers"));
        // 65,535 KiB is under 64 MiB: look elsewhere, no DataLoader;
        // 65,536 KiB is not: the victim itself is where to look, and with
        // nothing showing a DataLoader its workers come after that.
        let under = fixes(&dmesg(65_535));
        assert!(under.contains("Find what holds the RAM"), "{under}");
        assert!(!under.contains("DataLoader workers"), "{under}");
        let large = fixes(&dmesg(65_536));
        assert!(large.contains("itself held 64.00 MiB"), "{large}");
        assert!(large.contains("DataLoader workers"), "{large}");
    }

    /// Xid 45 is a follow-up; when the driver names the Xid it followed,
    /// that Xid is what to act on, described where the table knows it.
    #[test]
    fn a_follow_up_xid_names_its_cause() {
        let line = |earlier: u32| {
            format!("kernel: NVRM: Xid (PCI:0000:dc:00): 45, pid=1818990, name=python3, Ch 00000001 caused by previous Xid {earlier}")
        };
        let unknown = finding(&line(149));
        assert!(unknown.diagnosis.verdicts[0]
            .detail
            .contains("Xid 149, which oomwhy does not describe"));
        assert_eq!(
            unknown.diagnosis.fixes[0].title,
            "Look up the Xid that caused it"
        );
        let known = finding(&line(79));
        assert_eq!(
            known.diagnosis.fixes[0].title,
            "Act on the Xid that caused it"
        );
        assert!(known.diagnosis.fixes[0]
            .how
            .starts_with("Xid 79 (GPU has fallen off the bus)"));
        let zh = unknown
            .diagnosis
            .verdicts
            .iter()
            .find(|v| v.code == "xid_error")
            .and_then(|v| v.zh.as_ref())
            .map(|zh| zh.text.clone())
            .expect("Chinese");
        assert!(zh.contains("Xid 149"), "{zh}");
    }

    /// A message cut after the request says so instead of "does not fit".
    #[test]
    fn a_message_cut_before_its_figures_says_so() {
        let cut = finding("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 29.07 GiB. GPU 3 has a total capaci");
        let codes: Vec<&str> = cut
            .diagnosis
            .verdicts
            .iter()
            .map(|v| v.code.as_str())
            .collect();
        assert_eq!(codes, ["figures_missing"]);
        assert_eq!(cut.diagnosis.fixes[0].title, "Find the whole message");
        // One figure beyond the request is enough to reason on.
        let whole = finding("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 29.07 GiB. GPU 3 has a total capacity of 31.74 GiB of which");
        assert!(!has(
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 29.07 GiB. GPU 3 has a total capacity of 31.74 GiB of which",
            "figures_missing"
        ));
        assert!(!whole.diagnosis.verdicts.is_empty());
    }

    /// PyTorch ≈2.2–2.3 cut their own sentence-form message after `GPU`
    /// (wild 2030): no log holds the rest, so the first fix prints the
    /// figures instead of sending the reader to look for them.
    #[test]
    fn a_message_pytorch_cut_itself_asks_for_the_figures() {
        let cut = finding(
            "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 270.00 MiB. GPU 。",
        );
        assert_eq!(
            cut.diagnosis.fixes[0].title,
            "Print the memory figures where it fails"
        );
        assert!(cut
            .diagnosis
            .fixes
            .iter()
            .all(|f| f.title != "Find the whole message"));
    }

    #[test]
    fn implausible_sizes_are_flagged_not_reasoned_on() {
        let sentinel = modern(
            "20.00 MiB",
            "23.65 GiB",
            "17179869184.00 GiB",
            "3.00 GiB",
            "10.00 MiB",
        );
        let f = finding(&sentinel);
        assert_eq!(f.diagnosis.verdicts.len(), 1);
        assert_eq!(f.diagnosis.verdicts[0].code, "inconsistent_numbers");
        assert!(f.diagnosis.verdicts[0].detail.contains("not available"));
        let over = modern(
            "20.00 MiB",
            "23.65 GiB",
            "10.00 MiB",
            "30.00 GiB",
            "10.00 MiB",
        );
        let f = finding(&over);
        // Holding more than the card, and nothing else contradictory, is
        // memory the driver lent from system RAM (its own verdict).
        assert_eq!(f.diagnosis.verdicts.len(), 1);
        assert_eq!(f.diagnosis.verdicts[0].code, "system_memory_fallback");
        assert!(f.diagnosis.verdicts[0].detail.contains("30.01 GiB"));
        // With another contradiction beside it (more free than the card),
        // the numbers are not reasoned on.
        let over_and_free = modern(
            "20.00 MiB",
            "23.65 GiB",
            "24.00 GiB",
            "30.00 GiB",
            "10.00 MiB",
        );
        let f = finding(&over_and_free);
        assert_eq!(f.diagnosis.verdicts[0].code, "inconsistent_numbers");
        assert!(f.diagnosis.verdicts[0]
            .detail
            .contains("more than the whole card"));
    }

    const TRAINING: &[&str] = &[
        "gradient checkpointing",
        "torch.autocast",
        "Reduce the batch size",
    ];

    #[test]
    fn engines_and_front_ends_get_their_own_settings() {
        let oom = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which 100.00 MiB is free. Including non-PyTorch memory, this process has 23.54 GiB memory in use. Of the allocated memory 22.90 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated.";
        for (file, expect) in [
            ("vllm/worker/model_runner.py", "--max-model-len"),
            (
                "sglang/srt/model_executor/model_runner.py",
                "--mem-fraction-static",
            ),
            (
                "text_generation_server/models/flash_causal_lm.py",
                "--max-total-tokens",
            ),
        ] {
            let text = format!("Traceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/{file}\", line 10, in run\n    out = self.model(x)\n{oom}\n");
            let fixes = fixes(&text);
            assert!(fixes.contains(expect), "{file}: {fixes}");
            for training in TRAINING {
                assert!(!fixes.contains(training), "{file}: {training} in {fixes}");
            }
        }
        let text = format!("Traceback (most recent call last):\n  File \"/usr/lib/python3/site-packages/diffusers/pipelines/pipeline_utils.py\", line 10, in __call__\n    image = self.vae.decode(x)\n{oom}\n");
        assert!(fixes(&text).contains("enable_vae_tiling"));
    }

    #[test]
    fn moving_parameters_gets_loading_fixes_behind_rank_prefixes() {
        let text = "[rank0]: Traceback (most recent call last):\n[rank0]:   File \"train.py\", line 10, in <module>\n[rank0]:     model.to(device)\n[rank0]:   File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 825, in _apply\n[rank0]:     param_applied = fn(param)\n[rank0]:   File \"/usr/lib/python3/site-packages/torch/nn/modules/module.py\", line 1150, in convert\n[rank0]:     return t.to(device)\n[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 20.00 MiB is free. Including non-PyTorch memory, this process has 23.62 GiB memory in use. Of the allocated memory 23.10 GiB is allocated by PyTorch, and 20.00 MiB is reserved by PyTorch but unallocated.\n";
        let fixes = fixes(text);
        assert!(fixes.contains("Load the model in less memory"), "{fixes}");
        for training in TRAINING {
            assert!(!fixes.contains(training), "{training} in {fixes}");
        }
    }

    #[test]
    fn non_nvidia_gpus_never_get_nvidia_tools() {
        for text in [
            "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 978.00 MiB. GPU 0 has a total capacity of 15.98 GiB of which 630.00 MiB is free. Of the allocated memory 0 bytes is allocated by PyTorch, and 0 bytes is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
            "torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.98 GiB of which 4.30 GiB is free. Of the allocated memory 14.00 GiB is allocated by PyTorch, and 5.00 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
        ] {
            let fixes = fixes(text);
            for nvidia in ["nvidia-smi", "MIG", "CUDA_VISIBLE_DEVICES", "PYTORCH_CUDA_ALLOC_CONF"] {
                assert!(!fixes.contains(nvidia), "{nvidia} in {fixes}");
            }
        }
    }

    #[test]
    fn other_frameworks_get_no_pytorch_training_advice() {
        for text in [
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory",
            "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status code returned while running Conv node. Name:'Conv_0' Status Message: /onnxruntime_src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 1073741824",
        ] {
            let f = decode_str(text);
            assert_eq!(f.len(), 1, "{text}");
            let fixes: String = f[0].diagnosis.fixes.iter().map(|f| format!("{} {}", f.title, f.how)).collect();
            for torch in ["torch.autocast", "gradient checkpointing", "torch.utils"] {
                assert!(!fixes.contains(torch), "{torch} in {fixes}");
            }
        }
    }

    /// Every era × every fix: no option newer than every release printing
    /// the form, and options newer than some of them say from which release.
    #[test]
    fn fixes_fit_every_era() {
        let cases = [
            ("cached", "RuntimeError: CUDA out of memory. Tried to allocate 200.00 MiB (GPU 0; 12.00 GiB total capacity; 9.02 GiB already allocated; 100.00 MiB free; 1.50 GiB cached)"),
            ("reserved", "RuntimeError: CUDA out of memory. Tried to allocate 200.00 MiB (GPU 0; 12.00 GiB total capacity; 9.02 GiB already allocated; 100.00 MiB free; 10.52 GiB reserved in total by PyTorch)"),
            ("reserved+hint", "RuntimeError: CUDA out of memory. Tried to allocate 200.00 MiB (GPU 0; 12.00 GiB total capacity; 9.02 GiB already allocated; 100.00 MiB free; 10.52 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"),
            ("capacty", "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 200.00 MiB. GPU 0 has a total capacty of 12.00 GiB of which 100.00 MiB is free. Of the allocated memory 9.02 GiB is allocated by PyTorch, and 1.50 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"),
            ("capacity", &modern("200.00 MiB", "12.00 GiB", "100.00 MiB", "9.02 GiB", "1.50 GiB")),
        ];
        for (era, text) in cases {
            let f = finding(text);
            assert!(
                f.diagnosis
                    .verdicts
                    .iter()
                    .any(|v| v.code == "fragmentation"),
                "{era}"
            );
            let all = fixes(text);
            let (first, last) = crate::explain::setting::torch_releases(&f);
            // expandable_segments: 2.1.
            if last.is_some_and(|l| l < (2, 1)) {
                assert!(!all.contains("expandable_segments"), "{era}: {all}");
            }
            if first >= (2, 1) {
                assert!(all.contains("expandable_segments:True ("), "{era}: {all}");
            }
            // max_split_size_mb: ≈1.10.
            // Before it, only as the release to upgrade to.
            if last.is_some_and(|l| l < (1, 10)) {
                assert!(
                    !all.contains("max_split_size_mb")
                        || all.contains("Upgrading to PyTorch ≥ 1.10 adds"),
                    "{era}: {all}"
                );
                assert!(
                    !all.contains("export PYTORCH_CUDA_ALLOC_CONF=max_split"),
                    "{era}: {all}"
                );
            } else if first < (1, 10) {
                assert!(
                    all.contains("max_split_size_mb:128 (PyTorch ≥ 1.10)"),
                    "{era}: {all}"
                );
            }
            // torch.autocast: 1.10; torch.cuda.amp: 1.6; torch.amp.GradScaler:
            // exists from 2.3, offered alone from 2.4.
            if all.contains("torch.autocast(") && first < (1, 10) {
                assert!(
                    all.contains("PyTorch ≥ 1.10") || all.contains("need ≥ 1.10"),
                    "{era}: {all}"
                );
            }
            if last.is_some_and(|l| l < (1, 6)) {
                assert!(all.contains("upgrade to PyTorch ≥ 1.6"), "{era}: {all}");
            }
            if first < (2, 3) && all.contains("torch.amp.GradScaler") {
                assert!(all.contains("from PyTorch 2.3"), "{era}: {all}");
            }
            // set_per_process_memory_fraction: 1.8.
            if last.is_some_and(|l| l < (1, 8)) {
                assert!(
                    !all.contains("set_per_process_memory_fraction(0.9)"),
                    "{era}: {all}"
                );
            }
        }
    }

    #[test]
    fn printed_error_codes_are_kept_as_printed() {
        let code = |text: &str| finding(text).facts.get("error_code").cloned();
        // CUDA before 10.1 numbered cudaErrorIllegalAddress 77.
        assert_eq!(
            code("CUDA failure 77: an illegal memory access was encountered ; GPU=0 ; expr=cudaMemcpy(p, d, n, cudaMemcpyDeviceToHost)").as_deref(),
            Some("77")
        );
        assert_eq!(
            code("CUDA failure 700: an illegal memory access was encountered ; GPU=0 ; expr=cudaStreamSynchronize(stream)").as_deref(),
            Some("700")
        );
    }

    /// Every fix of every finding in a fixture, as one text.
    fn fixture_fixes(log: &str) -> String {
        decode_str(log)
            .iter()
            .flat_map(|f| f.diagnosis.fixes.iter())
            .map(|f| format!("{}: {}\n", f.title, f.how))
            .collect()
    }

    #[test]
    fn every_vendor_gets_its_own_tools() {
        for (name, log) in [
            (
                "hip",
                include_str!("../../../../fixtures/torch_hip_rocm.log"),
            ),
            (
                "xpu",
                include_str!("../../../../fixtures/xpu_capacity_free.log"),
            ),
            (
                "xpu early",
                include_str!("../../../../fixtures/xpu_capacity_early.log"),
            ),
            (
                "ipex",
                include_str!("../../../../fixtures/xpu_ipex_legacy.log"),
            ),
            (
                "dpcpp",
                include_str!("../../../../fixtures/dpcpp_legacy.log"),
            ),
            (
                "mps",
                include_str!("../../../../fixtures/mps_watermark_gib.log"),
            ),
            (
                "mps legacy",
                include_str!("../../../../fixtures/mps_legacy_gb.log"),
            ),
        ] {
            let fixes = fixture_fixes(log);
            assert!(!fixes.is_empty(), "{name}");
            for nvidia in [
                "nvidia-smi",
                "MIG",
                "CUDA_VISIBLE_DEVICES",
                "PYTORCH_CUDA_ALLOC_CONF",
            ] {
                assert!(!fixes.contains(nvidia), "{name}: {nvidia} in {fixes}");
            }
        }
        // Intel: one allocation over 4 GiB needs the relaxed limit.
        let xpu = "torch.OutOfMemoryError: XPU out of memory. Tried to allocate 4.50 GiB. GPU 0 has a total capacity of 15.11 GiB. Of the allocated memory 2.00 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but unallocated. Please use `empty_cache` to release all unoccupied cached memory.";
        let f = decode_str(xpu);
        if f.len() == 1 && f[0].backend.as_deref() == Some("xpu") {
            assert!(fixture_fixes(xpu).contains("UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1"));
        }
    }

    #[test]
    fn every_framework_gets_its_own_api() {
        for (name, log) in [
            (
                "tf",
                include_str!("../../../../fixtures/tf_oom_keras_bfc.log"),
            ),
            (
                "tf root",
                include_str!("../../../../fixtures/tf_oom_root_errors.log"),
            ),
            (
                "tf cublas",
                include_str!("../../../../fixtures/library_alloc_failed_tf_cublas.log"),
            ),
            (
                "xla",
                include_str!("../../../../fixtures/xla_oom_jax_buffer_stats.log"),
            ),
            (
                "cupy",
                include_str!("../../../../fixtures/cupy_oom_pool_limit.log"),
            ),
            (
                "llama.cpp",
                include_str!("../../../../fixtures/generic_oom_llama_cpp.log"),
            ),
            (
                "onnxruntime",
                include_str!("../../../../fixtures/generic_oom_onnxruntime.log"),
            ),
            (
                "ctranslate2",
                include_str!("../../../../fixtures/generic_oom_ctranslate2.log"),
            ),
        ] {
            let fixes = fixture_fixes(log);
            assert!(!fixes.is_empty(), "{name}");
            for torch in [
                "torch.autocast",
                "torch.cuda",
                "gradient_checkpointing",
                "torch.utils",
            ] {
                assert!(!fixes.contains(torch), "{name}: {torch} in {fixes}");
            }
        }
        // TensorFlow's mixed precision names the API by release.
        let tf = fixture_fixes(include_str!("../../../../fixtures/tf_oom_keras_bfc.log"));
        assert!(tf.contains("set_global_policy('mixed_float16') at the start (TensorFlow ≥ 2.4; in 1.15–2.3 it is tf.keras.mixed_precision.experimental.set_policy)"), "{tf}");
    }
}

/// Messages cut inside or after their process list: whether a listed
/// process is this one is decided by the part that is missing (this
/// process's own line, PyTorch's figures), so the verdict says "probably".
mod cut_process_list {
    use super::*;

    fn wild(name: &str) -> String {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fixtures/wild")
            .join(name);
        std::fs::read_to_string(path).unwrap()
    }

    /// The complete message of fixtures/wild/1212.txt (a CI run in a
    /// container: four processes listed, no line of its own), cut right
    /// after the process line that ends with `end`.
    fn ci_message_cut_after(end: &str) -> String {
        let text = wild("1212.txt");
        let start = text
            .find("torch.OutOfMemoryError: CUDA out of memory.")
            .unwrap();
        let message = text[start..].lines().next().unwrap();
        let cut = message.find(end).map(|i| i + end.len());
        message[..cut.unwrap_or(message.len())].to_string()
    }

    fn explained(text: &str) -> Finding {
        let mut findings = decode_str(text);
        assert_eq!(findings.len(), 1, "{text}");
        findings.remove(0)
    }

    /// fixtures/wild/706.txt, a real paste cut after its only process line,
    /// which holds all the memory in use on the card.
    #[test]
    fn the_only_process_of_a_cut_message_is_probably_this_one() {
        let f = explained(&wild("706.txt"));
        assert!(f.truncated);
        assert_eq!(f.diagnosis.probable_self_pid, Some(7529));
        let v = &f.diagnosis.verdicts[0];
        assert_eq!(v.code, "capacity_exhausted");
        assert!(v.title.contains("probably"), "{}", v.title);
        assert!(
            v.detail.starts_with("PID 7529, the only process listed"),
            "{}",
            v.detail
        );
        assert!(!f.explain.iter().any(|c| c == "other_processes"));
    }

    /// Complete, the same CI message decides by PyTorch's reserved figure,
    /// with no hedge.
    #[test]
    fn a_complete_message_decides_without_a_hedge() {
        let f = explained(&ci_message_cut_after("no cut"));
        assert!(!f.truncated);
        assert_eq!(f.diagnosis.probable_self_pid, Some(22056));
        assert!(f
            .diagnosis
            .verdicts
            .iter()
            .all(|v| !v.title.contains("probably")));
    }

    /// Cut after its four process lines: which is this process is unknown;
    /// the other processes probably hold the card.
    #[test]
    fn several_processes_cut_hedge_other_processes() {
        let f = explained(&ci_message_cut_after(
            "Process 22050 has 1.00 GiB memory in use.",
        ));
        assert!(f.truncated);
        assert_eq!(f.diagnosis.probable_self_pid, None);
        let v = &f.diagnosis.verdicts[0];
        assert_eq!(v.code, "other_processes");
        assert!(v.title.contains("probably"), "{}", v.title);
        assert!(
            v.detail.starts_with("Other processes probably hold"),
            "{}",
            v.detail
        );
        assert!(
            v.detail.contains("may be this process itself"),
            "{}",
            v.detail
        );
    }

    /// The second message of fixtures/wild/1212.txt, cut by the paste in
    /// its third process line (`Process 22053 has 246.00 MiB mem`).
    #[test]
    fn a_real_paste_cut_inside_its_process_list() {
        let text = wild("1212.txt");
        let f = decode_str(&text)
            .into_iter()
            .find(|f| f.sizes.requested_bytes == Some(216 * MIB))
            .unwrap();
        assert!(f.truncated);
        assert_eq!(f.diagnosis.probable_self_pid, None);
        let v = &f.diagnosis.verdicts[0];
        assert_eq!(v.code, "other_processes");
        assert!(v.title.contains("probably"), "{}", v.title);
    }

    /// Cut after the first of them: PID 22056 holds 3.56 GiB of the
    /// 14.04 GiB in use, so 10.48 GiB is held by what the cut part lists;
    /// it is not taken to be this process.
    #[test]
    fn a_single_process_that_leaves_memory_unlisted_is_not_guessed() {
        let f = explained(&ci_message_cut_after(
            "Process 22056 has 3.56 GiB memory in use.",
        ));
        assert!(f.truncated);
        assert_eq!(f.diagnosis.probable_self_pid, None);
        assert!(f.diagnosis.verdicts[0].title.contains("probably"));
    }

    /// Cut one sentence later, after PyTorch's figures: the reserved figure
    /// decides, as in a complete message.
    #[test]
    fn a_cut_after_the_figures_decides_by_them() {
        let f = explained(&ci_message_cut_after(
            "and 70.13 MiB is reserved by PyTorch but unallocated.",
        ));
        assert_eq!(f.diagnosis.probable_self_pid, Some(22056));
        assert!(f
            .diagnosis
            .verdicts
            .iter()
            .all(|v| !v.title.contains("probably")));
    }

    /// The 706 message with the process's figure lowered around the margin:
    /// what is unlisted counts as outside from `OUTSIDE_MIN` (and a tenth of
    /// the card, 3.94 GiB here, so the larger margin binds).
    #[test]
    fn the_guess_stops_where_unlisted_memory_would_count_as_outside() {
        let with_process = |held: &str| {
            let text = wild("706.txt").replace("39.23 GiB memory in use", held);
            explained(&text).diagnosis.probable_self_pid
        };
        // 39.39 GiB − 31.94 MiB in use; a tenth of the card is 3.94 GiB.
        assert_eq!(with_process("35.44 GiB memory in use"), Some(7529));
        assert_eq!(with_process("35.40 GiB memory in use"), None);
    }
}

/// A program's own host-memory check (Ollama's, from a real paste in the
/// fifth holdout) is explained as that program's, with its figures, and
/// gets its own levers, no PyTorch or NumPy advice; the same words inside
/// a Python traceback are not a job's RAM to look for.
mod host_reporter {
    use crate::decode_str;

    const OLLAMA: &str =
        "\"model requires more system memory (5.3 GiB) than is available (3.3 GiB)\"";

    #[test]
    fn ollama_check_is_its_own() {
        let f = &decode_str(OLLAMA)[0];
        let v = &f.diagnosis.verdicts[0];
        assert!(v.detail.starts_with("Ollama"), "{}", v.detail);
        assert!(
            v.detail.contains("only 3.30 GiB was available"),
            "{}",
            v.detail
        );
        assert!(!v.detail.contains("PyTorch"), "{}", v.detail);
        let ids: Vec<&str> = f.diagnosis.fixes.iter().map(|x| x.id.as_str()).collect();
        // Ollama's own levers (a smaller model or quantisation, num_ctx,
        // the GPU in use) before a generic search for the RAM's holder.
        assert_eq!(ids.first(), Some(&"llama-cpp-less-ram"), "{ids:?}");
        assert!(!ids.contains(&"allocate-less-at-once"), "{ids:?}");
        assert!(!ids.contains(&"lighter-dataloader-workers"), "{ids:?}");
    }

    #[test]
    fn the_same_words_under_python_keep_python_fixes() {
        let text = format!(
            "Traceback (most recent call last):\n  File \"run.py\", line 3, in <module>\n    client.generate(model)\nollama._types.ResponseError: {}",
            OLLAMA.trim_matches('"')
        );
        let findings = decode_str(&text);
        let f = findings.first().expect("found");
        let ids: Vec<&str> = f.diagnosis.fixes.iter().map(|x| x.id.as_str()).collect();
        assert!(!ids.contains(&"lower-job-memory"), "{ids:?}");
    }
}

/// OpenVINO's GPU plugin running out of OpenCL resources (a real paste of
/// the fifth holdout) is explained as OpenVINO's, not as cuBLAS's under
/// PyTorch; a cuBLAS status keeps its own explanation.
mod other_reporter_resources {
    use crate::decode_str;

    #[test]
    fn openvino_is_not_cublas() {
        let text = "\"Due to the driver bug any subsequent OpenCL API call will cause application hang, so GPU plugin can't finish correctly. Please try to update the driver or reduce memory consumption (use smaller batch size, less streams, lower precision, etc)to avoid CL_OUT_OF_RESOURCES exception\"";
        let f = &decode_str(text)[0];
        let v = &f.diagnosis.verdicts[0];
        assert!(v.detail.starts_with("OpenVINO"), "{}", v.detail);
        assert!(
            !v.detail.contains("cuBLAS") && !v.detail.contains("PyTorch"),
            "{}",
            v.detail
        );
        assert!(f.diagnosis.fixes.iter().all(|x| !x.how.contains("torch")));
    }

    #[test]
    fn cublas_status_keeps_its_library() {
        let f = &decode_str("RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`")[0];
        assert!(f.diagnosis.verdicts[0].detail.starts_with("cuBLAS"));
    }
}

/// The sixth holdout's audited first screens: each first fix follows the
/// stack and the top verdict (real pastes from fixtures/wild).
mod sixth_holdout_first_fixes {
    use crate::explain::test_support::fix_ids;

    fn first_how(text: &str) -> String {
        crate::decode_str(text)[0].diagnosis.fixes[0].how.clone()
    }

    /// TensorFlow 1's cuDNN handle failure (1608) gets both TensorFlow
    /// settings; Lua Torch's (1609) gets no TensorFlow advice at all.
    #[test]
    fn library_start_advice_follows_the_stack() {
        let tf = include_str!("../../../../fixtures/wild/1608.txt");
        assert_eq!(fix_ids(tf)[0], "status-leave-memory-for-library");
        let how = first_how(tf);
        assert!(
            how.contains("allow_growth") && how.contains("set_memory_growth"),
            "{how}"
        );
        let lua = include_str!("../../../../fixtures/wild/1609.txt");
        let found = crate::decode_str(lua);
        let text: String = found[0]
            .diagnosis
            .fixes
            .iter()
            .map(|x| x.how.as_str())
            .collect();
        assert!(!text.contains("TensorFlow"), "{text}");
    }

    /// CNTK's own CUDA wrapper (`; expr=cudaMalloc(...)`, 1648) is not
    /// explained through PyTorch's cache; nor is another program's
    /// capital-E `CUDA Error:` with no Python in sight.
    #[test]
    fn another_program_s_cuda_wrapper_is_not_pytorch() {
        let cntk = include_str!("../../../../fixtures/wild/1648.txt");
        let ids = fix_ids(cntk);
        assert!(
            !ids.iter().any(|x| x == "leave-room-outside-torch-cache"),
            "{ids:?}"
        );
        let bare = fix_ids("CUDA Error: out of memory\n");
        assert!(
            !bare.iter().any(|x| x == "leave-room-outside-torch-cache"),
            "{bare:?}"
        );
    }

    /// An Ascend NPU whose memory is mostly outside PyTorch's allocator
    /// (1642: 56.58 of 60.96 GiB) looks for the holder first.
    #[test]
    fn npu_memory_held_outside_leads_to_its_holder() {
        let npu = include_str!("../../../../fixtures/wild/1642.txt");
        assert_eq!(fix_ids(npu)[0], "npu-smi-check");
    }

    /// ROCr's memory access fault (1640) and the NVIDIA driver failing to
    /// bring up the GPU (1645) have concrete first fixes.
    #[test]
    fn fault_messages_get_concrete_first_fixes() {
        let rocm = include_str!("../../../../fixtures/wild/1640.txt");
        assert_eq!(fix_ids(rocm)[0], "status-find-failing-kernel");
        assert!(first_how(rocm).contains("AMD_SERIALIZE_KERNEL=3"));
        let nvrm = include_str!("../../../../fixtures/wild/1645.txt");
        assert_eq!(fix_ids(nvrm)[0], "check-gpu-driver-state");
        assert!(first_how(nvrm).contains("dmesg"));
    }
}

/// The fix ids and every word a finding's explanation says.
fn fix_ids_and_words(f: &crate::record::Finding) -> (Vec<String>, String) {
    let ids = f.diagnosis.fixes.iter().map(|x| x.id.clone()).collect();
    let words = f
        .diagnosis
        .verdicts
        .iter()
        .map(|v| format!("{} {}\n", v.title, v.detail))
        .chain(
            f.diagnosis
                .fixes
                .iter()
                .map(|x| format!("{} {}\n", x.title, x.how)),
        )
        .collect();
    (ids, words)
}

/// ONNX Runtime's TensorRT execution provider prints TensorRT's message
/// behind ONNX Runtime's log prefix (fixtures/wild/1733.txt and 2433.txt):
/// the program is ONNX Runtime, and the engine's limits are that
/// provider's options, not TensorRT-LLM's.
#[test]
fn tensorrt_behind_onnxruntime_log_prefix_is_onnxruntime() {
    for paste in [
        include_str!("../../../../fixtures/wild/1733.txt"),
        include_str!("../../../../fixtures/wild/2433.txt"),
    ] {
        let findings = decode_str(paste);
        let f = &findings[0];
        assert_eq!(
            setting::Framework::of(f),
            setting::Framework::OnnxRuntime,
            "{:?}",
            f.nearby
        );
        let (_, words) = fix_ids_and_words(f);
        assert!(words.contains("trt_max_workspace_size"), "{words}");
        assert!(!words.contains("TensorRT-LLM"), "{words}");
    }
}

/// NPP's allocation failure (managedCuda's NPPException "Device allocation
/// error", fixtures/wild/2214.txt; NPP's own status name): advice about
/// the images and buffers NPP was asked for and what else holds the card,
/// no training recipe.
#[test]
fn npp_allocation_errors_get_image_library_advice() {
    let managed = include_str!("../../../../fixtures/wild/2214.txt");
    let status = "nppiResize_8u_C3R returned NPP_MEMORY_ALLOCATION_ERR\n";
    for paste in [managed, status] {
        let findings = decode_str(paste);
        let (ids, words) = fix_ids_and_words(&findings[0]);
        assert_eq!(ids[0], "npp-images-and-buffers", "{ids:?}");
        assert!(
            !ids.iter().any(|id| id == "make-workload-smaller"),
            "{ids:?}"
        );
        for word in ["batch", "precision", "model"] {
            assert!(!words.contains(word), "{word}: {words}");
        }
    }
}

/// A bare `Killed` right after the lines that start writing a checkpoint
/// (Lightning's "Summoning checkpoint.", fixtures/wild/2931.txt; a
/// DreamBooth notebook's "SAVING CHECKPOINT...", 2932.txt) is the save's
/// spike in host RAM: that phase's fix first, no DataLoader or batch
/// advice, and the progress counter is not read as a late batch.
#[test]
fn killed_right_after_checkpoint_saving_is_the_save() {
    for paste in [
        include_str!("../../../../fixtures/wild/2931.txt"),
        include_str!("../../../../fixtures/wild/2932.txt"),
    ] {
        let findings = decode_str(paste);
        let f = &findings[0];
        // The record's phase says it (read once, in context.rs).
        assert_eq!(f.phase.name, "checkpoint_saving", "{:?}", f.nearby);
        assert!(setting::saving_checkpoint(f), "{:?}", f.nearby);
        let (ids, words) = fix_ids_and_words(f);
        assert_eq!(ids[0], "save-checkpoints-with-less-ram", "{ids:?}");
        for id in [
            "lighter-dataloader-workers",
            "pinned-memory-off",
            "memory-kept-across-steps",
        ] {
            assert!(!ids.iter().any(|x| x == id), "{id}: {ids:?}");
        }
        assert!(!words.contains("batch was larger"), "{words}");
    }
    // The same bare `Killed` with no save around it keeps the general advice.
    let findings =
        decode_str("Epoch 3: 100%|█| 209/209 [06:12<00:00,  1.78s/it, loss=0.0685]\nKilled\n");
    assert!(!setting::saving_checkpoint(&findings[0]));
    assert_eq!(findings[0].phase.name, "unknown");
}

/// An Xid on a GeForce card the writer names on a line above the driver's
/// (fixtures/wild/2257.txt: "Also experiencing this issue on an RTX
/// 4090!"): DCGM supports data-centre GPUs only, so no `dcgmi`.
#[test]
fn geforce_named_nearby_gets_no_dcgm() {
    let findings = decode_str(include_str!("../../../../fixtures/wild/2257.txt"));
    let f = &findings[0];
    assert_eq!(
        xid::gpu_class_of(f),
        xid::GpuClass::Desktop,
        "{:?}",
        f.nearby
    );
    let (_, words) = fix_ids_and_words(f);
    assert!(!words.contains("dcgmi"), "{words}");
}

/// Old PyTorch builds (CUDA 10.0 or older) print the runtime's numbers
/// from before CUDA 10.1 renumbered them: THC's `error=77 : an illegal
/// memory access` (fixtures/wild/825.txt), `error=4 : unspecified launch
/// failure` (2255), `error=59 : device-side assert triggered` (367),
/// `error=48 : no kernel image ...` (948). The number stays as printed,
/// with the error's number since beside it, never rewritten.
#[test]
fn cuda_numbers_from_before_10_1_stay_as_printed() {
    let cases = [
        (
            include_str!("../../../../fixtures/wild/825.txt"),
            "77",
            "cudaErrorIllegalAddress",
            "700",
        ),
        (
            include_str!("../../../../fixtures/wild/2255.txt"),
            "4",
            "cudaErrorLaunchFailure",
            "719",
        ),
        (
            include_str!("../../../../fixtures/wild/367.txt"),
            "59",
            "cudaErrorAssert",
            "710",
        ),
        (
            include_str!("../../../../fixtures/wild/948.txt"),
            "48",
            "cudaErrorNoKernelImageForDevice",
            "209",
        ),
    ];
    for (paste, printed, name, now) in cases {
        let findings = decode_str(paste);
        let f = &findings[0];
        assert_eq!(f.facts["error_code"], printed, "{name}: {:?}", f.facts);
        assert_eq!(f.facts["error_name"], name);
        assert_eq!(f.facts["numbering"], "CUDA before 10.1");
        assert_eq!(f.facts["renumbered_code"], now);
        let (_, words) = fix_ids_and_words(f);
        assert!(!words.contains(&format!("({now})")), "{words}");
    }
    // The table of the old numbering (CUDA 9.x's driver_types.h).
    assert_eq!(
        crate::codes::cuda_runtime_before_10_1(77),
        Some("cudaErrorIllegalAddress")
    );
    assert_eq!(
        crate::codes::cuda_runtime_before_10_1(4),
        Some("cudaErrorLaunchFailure")
    );
    assert_eq!(
        crate::codes::cuda_runtime_before_10_1(127),
        Some("cudaErrorStartupFailure")
    );
    assert_eq!(crate::codes::cuda_runtime_before_10_1(700), None);
}

/// darknet's own `CUDA Error: out of memory` (capital E), with its .cfg's
/// subdivisions in the writer's lines: darknet's levers, not PyTorch's.
#[test]
fn darknet_form_with_its_cfg_nearby_gets_darknet_levers() {
    let text = "yolo4训练数据遇到的问题\n\n1.CUDA Error: out of memory\n\n\ncfg文件参数修改\nsubdivision:这个参数很有意思的,它会让你的每一个batch不是一下子都丢到网络里。\n";
    let findings = decode_str(text);
    assert_eq!(findings.len(), 1);
    let fixes: Vec<&str> = findings[0]
        .diagnosis
        .fixes
        .iter()
        .map(|x| x.id.as_str())
        .collect();
    assert_eq!(fixes.first(), Some(&"darknet-smaller-passes"), "{fixes:?}");
    let all = format!("{:?}", findings[0].diagnosis);
    assert!(!all.contains("set_per_process_memory_fraction"), "{all}");
    assert!(!all.contains("PyTorch's allocator"), "{all}");
}

/// Another program's capital-E form with no Python and no darknet marks:
/// no PyTorch API either.
#[test]
fn capital_e_cuda_error_without_python_is_not_pytorch() {
    let findings = decode_str("CUDA Error: out of memory\n");
    assert_eq!(findings.len(), 1);
    let all = format!("{:?}", findings[0].diagnosis);
    assert!(!all.contains("torch.cuda"), "{all}");
    assert!(!all.contains("outside_allocator_oom"), "{all}");
}

/// A text-to-image ncnn tool is not a tiled upscaler: no `-t`, and an
/// output the user calls noise is not called unharmed.
#[test]
fn unknown_ncnn_tool_gets_no_upscaler_levers() {
    let text = "When running with an RTX 3090 with 24gb VRAM and 64gb system RAM, I am getting lots of `vkAllocateMemory failed -2` errors. The image is completed regardless, but is just random noise.\n\n./zimage-ncnn-vulkan -m z-image-ncnn/z-image-turbo/ \n[0 NVIDIA GeForce RTX 3090]  queueC=2[8]  queueT=1[2]  rebar=1  r-score=91\n";
    let findings = decode_str(text);
    assert_eq!(findings.len(), 1);
    let d = &findings[0].diagnosis;
    let all = format!("{d:?}");
    assert!(
        !d.fixes.iter().any(|x| x.id == "ncnn-smaller-tiles"),
        "{all}"
    );
    assert!(!all.contains("-t 200"), "{all}");
    assert!(!all.contains("did not stop the work"), "{all}");
    assert!(d.fixes.iter().any(|x| x.id == "ncnn-smaller-job"), "{all}");
}

/// A named upscaler keeps its tile option.
#[test]
fn named_ncnn_upscaler_keeps_tile_lever() {
    let text = "realesrgan-ncnn-vulkan.exe -i in.png -o out.png\nvkAllocateMemory failed -2\n";
    let d = &decode_str(text)[0].diagnosis;
    assert!(
        d.fixes.iter().any(|x| x.id == "ncnn-smaller-tiles"),
        "{d:?}"
    );
}

#[test]
fn a_setting_the_writer_already_applied_is_not_offered_again() {
    let ids = |text: &str| -> Vec<String> {
        decode_str(text)[0]
            .diagnosis
            .fixes
            .iter()
            .map(|fix| fix.id.clone())
            .collect()
    };
    // The writer set the relaxed limit and reports the next failure.
    let tried = "First try with -ngl 99 -fit off -c 8192 -ub 256: error 39 UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, Error OP MUL_MAT (ggml-sycl.cpp:5177) with 27GB free. Added UR_L0_ENABLE_RELAXED_ALLOCATION_LIMITS=1: MUL_MAT now passes, but get error 40 UR_RESULT_ERROR_OUT_OF_RESOURCES on FLASH_ATTN_EXT (same line).";
    assert!(
        !ids(tried).iter().any(|id| id.contains("relaxed")),
        "{:?}",
        ids(tried)
    );
    let untried = "error 39 UR_RESULT_ERROR_OUT_OF_DEVICE_MEMORY, Error OP MUL_MAT (ggml-sycl.cpp:5177) with 27GB free.";
    assert!(
        ids(untried).iter().any(|id| id.contains("relaxed")),
        "{:?}",
        ids(untried)
    );
    // PyTorch's own hint names the setting as advice: still offered.
    let hint = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. Process 1181 has 23.64 GiB memory in use. Of the allocated memory 18.10 GiB is allocated by PyTorch, and 5.09 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)";
    assert!(
        ids(hint).contains(&"expandable-segments".to_string()),
        "{:?}",
        ids(hint)
    );
    let set = format!("export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True\n{hint}");
    assert!(
        !ids(&set).contains(&"expandable-segments".to_string()),
        "{:?}",
        ids(&set)
    );
}

#[test]
fn settings_compare_without_case_or_spaces_around_equals() {
    let form = catalogue::settings_form("engine = LLM(model, Enforce_Eager = True)");
    assert!(catalogue::shows_applied(&form, "enforce_eager=true"));
    let advice = catalogue::settings_form("Consider setting enforce_eager=True");
    assert!(!catalogue::shows_applied(&advice, "enforce_eager=true"));
}

//! Out-of-memory messages of GPU stacks other than CUDA's, in the words
//! their own source prints (docs/vendor-gpu.md):
//!
//! ```text
//! [GPU] out of GPU resources
//! [GPU] Exceeded max size of memory object allocation: requested N bytes, but max alloc size supported by device is M bytes.
//! [W dml_heap_allocator.cc:97] DML allocator out of memory!
//! Could not allocate tensor with N bytes. There is not enough GPU video memory available!
//! ggml_vulkan: Device memory allocation of size N failed.
//! ```
//!
//! The first two are OpenVINO's GPU plugin (its messages carry the plugin's
//! `[GPU] ` tag; the words alone are ordinary prose), the next two
//! DirectML's allocators (tensorflow-directml-plugin's and torch-directml's
//! heap allocator, torch-directml's tensor allocation), the last ggml's
//! Vulkan backend, whose sentence is read with or without its
//! `ggml_vulkan: ` prefix (an issue's title drops it).
//!
//! Each says that an allocation failed and, where it prints one, how large
//! it was; a message of the same words the general grammar reads says less
//! (no reporter, no sizes), so this family comes first.

use super::{re, Family, Message};
use crate::i18n::reporter as R;
use crate::record::{fact, Era, Finding, Kind};
use regex::Regex;
use std::sync::OnceLock;

/// One message form.
struct Form {
    /// Where the message starts.
    start: Regex,
    backend: &'static str,
    reported_by: &'static str,
    era: Option<Era>,
    /// The requested size in bytes (group 1), where the form prints it.
    requested: Option<Regex>,
    /// The largest single allocation the device allows (group 1).
    max_alloc: Option<Regex>,
}

fn forms() -> &'static [Form] {
    static FORMS: OnceLock<Vec<Form>> = OnceLock::new();
    FORMS.get_or_init(|| {
        vec![
            // ocl_engine.cpp: a buffer or image the driver refused
            // (CL_OUT_OF_RESOURCES, CL_MEM_OBJECT_ALLOCATION_FAILURE, ...).
            Form {
                start: re(r"\[GPU\] out of GPU resources\b"),
                backend: "opencl",
                reported_by: R::OPENVINO_GPU.en,
                era: None,
                requested: None,
                max_alloc: None,
            },
            // ocl_engine.cpp's check before it allocates: one buffer above
            // the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE.
            Form {
                start: re(r"\[GPU\] Exceeded max size of memory object allocation\b"),
                backend: "opencl",
                reported_by: R::OPENVINO_GPU.en,
                era: None,
                requested: Some(re(r"\brequested (\d+) bytes\b")),
                max_alloc: Some(re(r"\bmax alloc size supported by device is (\d+) bytes\b")),
            },
            // The heap allocator's warning when CreateHeap or
            // CreateReservedResource returns an out-of-memory HRESULT.
            Form {
                start: re(r"\bDML allocator out of memory!?"),
                backend: "directml",
                reported_by: super::grammar::program_names::DIRECTML,
                era: None,
                requested: None,
                max_alloc: None,
            },
            Form {
                start: re(r"\bCould not allocate tensor with \d+ bytes\. There is not enough GPU video memory available"),
                backend: "directml",
                reported_by: super::grammar::program_names::DIRECTML,
                era: None,
                requested: Some(re(r"\ballocate tensor with (\d+) bytes\b")),
                max_alloc: None,
            },
            // ggml-vulkan.cpp's ggml_vk_create_buffer, when vkAllocateMemory threw.
            Form {
                start: re(r"\b(?:ggml_vulkan: )?Device memory allocation of size \d+ failed\b"),
                backend: "vulkan",
                reported_by: R::GGML_VULKAN.en,
                era: Some(Era::Vulkan),
                requested: Some(re(r"\ballocation of size (\d+) failed\b")),
                max_alloc: None,
            },
        ]
    })
}

/// A literal each form holds. The family is tried on every line with `ut of
/// memory` (DirectML's warning's literal): these plain searches keep the
/// forms' patterns off the lines that hold none of them.
const ANCHORS: &[&str] = &[
    "[GPU] ",
    "DML allocator",
    "not enough GPU video memory",
    "memory allocation of size",
];

/// The first form on the line, by where it starts.
fn form_on(line: &str) -> Option<(usize, &'static Form)> {
    if !ANCHORS.iter().any(|anchor| line.contains(anchor)) {
        return None;
    }
    forms()
        .iter()
        .filter_map(|form| form.start.find(line).map(|m| (m.start(), form)))
        .min_by_key(|&(at, _)| at)
}

/// A vendor GPU stack's own out-of-memory message (module docs).
pub struct VendorGpuOom;

impl Family for VendorGpuOom {
    fn triggers(&self) -> &'static [&'static str] {
        &[
            // Each on a piece the prefilter already searches for: `ut of `
            // (OpenVINO's first, DirectML's warning), ` is ` (OpenVINO's
            // size check), `memory available!` (the grammar's literal for
            // torch-directml's sentence), and ggml's sentence is the literal
            // the general family already has.
            "ut of GPU resources",
            "DML allocator out of memory",
            "supported by device is ",
            "memory available!",
            "Device memory allocation of size",
        ]
    }

    /// None: the start patterns match digits as a class, never a value.
    fn start_figure_phrases(&self) -> Option<&'static [&'static str]> {
        Some(&[])
    }

    fn start(&self, line: &str) -> Option<usize> {
        form_on(line).map(|(at, _)| at)
    }

    fn decode(&self, message: &Message<'_>) -> Option<Finding> {
        let first = message.lines.first()?;
        let (_, form) = form_on(first)?;
        let text = message.joined();
        let mut finding = message.finding(Kind::GenericOom, text.clone());
        finding.backend = Some(form.backend.into());
        finding.era = form.era;
        finding
            .facts
            .insert(fact::REPORTED_BY.into(), form.reported_by.into());
        finding.facts.insert(fact::MEMORY.into(), "device".into());
        let bytes = |pattern: &Option<Regex>| {
            pattern
                .as_ref()
                .and_then(|r| r.captures(&text))
                .and_then(|c| c.get(1))
                .and_then(|m| m.as_str().parse::<u64>().ok())
        };
        finding.sizes.requested_bytes = bytes(&form.requested);
        if let Some(max) = bytes(&form.max_alloc) {
            finding
                .sizes
                .extra
                .insert("max_alloc_bytes".into(), Some(max));
        }
        Some(finding)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::detect::decode_lines;

    /// Real pastes (fixtures/wild 2010, 2046, 2016, 2037, 2125) and the
    /// form ggml prints with its prefix.
    #[test]
    fn reads_each_form() {
        let cases: &[(&str, &str, Option<u64>)] = &[
            ("[GPU] out of GPU resources", "opencl", None),
            ("[GPU] Exceeded max size of memory object allocation: requested 2305843008391495680 bytes, but max alloc size supported by device is 4294959104 bytes.Please try to reduce batch size or use lower precision.", "opencl", Some(2305843008391495680)),
            ("   **[W dml_heap_allocator.cc:97] DML allocator out of memory!", "directml", None),
            ("\"Could not allocate tensor with 81544192 bytes. There is not enough GPU video memory available!\"", "directml", Some(81544192)),
            ("Bug: Device memory allocation of size 17368219904 failed.", "vulkan", Some(17368219904)),
            ("ggml_vulkan: Device memory allocation of size 67119120 failed.", "vulkan", Some(67119120)),
        ];
        for &(line, backend, requested) in cases {
            let f = decode_lines(&VendorGpuOom, &[line]).unwrap_or_else(|| panic!("{line}"));
            assert_eq!(f.kind, Kind::GenericOom, "{line}");
            assert_eq!(f.backend.as_deref(), Some(backend), "{line}");
            assert_eq!(f.sizes.requested_bytes, requested, "{line}");
        }
        let f = decode_lines(&VendorGpuOom, &[cases[1].0]).unwrap();
        assert_eq!(f.sizes.extra["max_alloc_bytes"], Some(4294959104));
        assert_eq!(f.facts[fact::REPORTED_BY], R::OPENVINO_GPU.en);
    }

    /// The same words without the stack's own form are prose.
    #[test]
    fn prose_is_not_a_message() {
        for line in [
            "system may run out of GPU resources and labs won't be launched",
            "print('Out of GPU resources while trying to calibrate model.')",
            "Exceeded max size of memory object allocation is what I expected",
        ] {
            assert!(VendorGpuOom.start(line).is_none(), "{line}");
        }
    }
}

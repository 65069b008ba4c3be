//! Bit math (placeholder)

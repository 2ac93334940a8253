-- 0008: store.nvtx_ranges.domain_guessed: true when the range's domain name was not named by a
-- NvtxDomainCreate event in the export (cut off by a sliced capture) but inferred from its range
-- names (NCCL's API names). `nsys stats` prints such a range in no domain (`:ncclSend`), and
-- nvtx_summary follows it; `domain` keeps the guess. NULL in rows stored before: named.
ALTER TABLE store.nvtx_ranges ADD COLUMN domain_guessed BOOLEAN;

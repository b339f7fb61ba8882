"""Publish an experiment as a Hugging Face dataset folder (`dialectbias export EXP --hf-dataset DIR`): Parquet
files, one config per table, and a `README.md` dataset card. Nothing is uploaded (docs/publish-dataset.md)."""

from dialectbias.publish._hf_dataset import DEFAULT_LICENSE, HFDatasetResult, publish_hf_dataset, write_hf_dataset

__all__ = ["DEFAULT_LICENSE", "HFDatasetResult", "publish_hf_dataset", "write_hf_dataset"]

"""The real-cluster scale benchmark's parts (bench/real_cluster_scale.py runs them)."""

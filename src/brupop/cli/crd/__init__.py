"""`brupop crd`: the BottlerocketShadow and BottlerocketUpdatePolicy CRDs, from the models."""

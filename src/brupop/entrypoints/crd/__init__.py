"""`brupop crd`: the BottlerocketShadow CustomResourceDefinition, generated from the models."""

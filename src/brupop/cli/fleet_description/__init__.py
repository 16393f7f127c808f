"""A fleet described by flags and a policy file: what `brupop plan` and `brupop simulate` share."""

"""`bddgen review`: every turn beside its evidence on a local page; accept, edit, reject and lock
write back to the .feature files in place."""

"""CLI verbs, one module each (`thresher.cli` names them in its verb table and imports only the one
a command line asks for); `arguments` holds what they share: config flags, inputs, help."""

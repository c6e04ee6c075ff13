"""Project scaffolding for `bddgen init`: the template files and the code that writes them."""

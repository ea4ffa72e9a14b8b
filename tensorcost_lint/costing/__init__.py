"""Call site → checked plans → `SiteCost`: the contraction, chain and overflow checks the estimator
runs for one recorded site, from its facts and the declared sizes. Reads `analysis` records and
`estimator`; knows nothing of rules, files or formats."""

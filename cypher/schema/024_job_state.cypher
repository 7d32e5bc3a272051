// Workers look for claimable jobs by state; `graphsvc jobs list` by subject and state.
CREATE INDEX job_state IF NOT EXISTS FOR (j:Job) ON (j.state, j.subject)

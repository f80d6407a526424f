package jobs

import "time"

// TypeResultQuery computes a custom result query (contract §2.9).
const TypeResultQuery = "results:query"

// ResultQueryTask is the payload of TypeResultQuery.
type ResultQueryTask struct {
	QueryID string `json:"query_id"`
}

// ResultQueryJob is the job computing a custom query; its id is the query's,
// so it is queued once.
func ResultQueryJob(queryID string) Job {
	return Job{Type: TypeResultQuery, Payload: ResultQueryTask{QueryID: queryID},
		ID: "resultquery:" + queryID, Queue: QueueDefault, Timeout: 5 * time.Minute}
}

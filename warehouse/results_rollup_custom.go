package warehouse

// rollupCustomEventsSQL is customEventsSQL on the visitors basis with the
// fired visitors' first assignments looked up in the rollup instead of in
// the assignments (reading a million visitor ids to find the few that
// fired): in the copy's block of visitors flagged as fired at its build
// (copyLookupSQL), plus the ones that fired since, and merged for visitors
// with rows in other parts (hasOthers). The assignment is kept as
// assignmentsSQL keeps it: in a group, not a bot, assigned in the window.
// fresh is the visitors that fired since the build (newlyNamed).
func rollupCustomEventsSQL(hasOthers bool, fresh newVisitors) string {
	copied := copyLookupSQL("fired", fresh)
	if hasOthers {
		copied += " AND vid NOT IN (" + othersSQL + ")"
	}
	visitors := `SELECT vid, pack AS r_pack, device AS r_device FROM {db}.agg_visitors_copy
			WHERE shop_id = @shop AND experiment_id = @exp AND source_part = @base AND build = @build AND ` + copied
	if hasOthers {
		visitors += `
			UNION ALL
			SELECT vid, argMaxMerge(assignment) AS r_pack, argMaxMerge(device) AS r_device FROM {db}.agg_visitors
			WHERE shop_id = @shop AND experiment_id = @exp AND vid IN (` + othersSQL + `) AND vid IN (` + firedVisitorsSQL + `)
			GROUP BY vid`
	}
	return customEventsOverSQL(BasisVisitors, `
	SELECT vid, toInt16(toInt32(r_pack % 65536) - 1) AS a_group, toUInt8(1) AS a_hit
	FROM (`+visitors+`)
	WHERE r_pack % 65536 > 0 AND intDiv(r_pack, 65536) % 2 = 0 AND r_device != 'bot'
		AND `+inWindow("toDateTime(toUInt32(intDiv(r_pack, 131072)))"))
}

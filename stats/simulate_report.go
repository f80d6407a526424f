package stats

import (
	"cmp"
	"math"
)

// The calibration targets of issue 15 (DESIGN §11): A/A false positives at
// α = 5 % within ±0.75 points, each direction at α/2 within ±0.6 points;
// under daily peeking the sequential test at most α; simulated power within
// 0.03 of normal theory.
const (
	TargetFPRTolerance       = 0.0075
	TargetDirectionTolerance = 0.006
	TargetPowerTolerance     = 0.03
)

// ReportConfig is the calibration suite `lift stats simulate` prints.
type ReportConfig struct {
	Visitors, Runs int
	Conversion     float64
	// Days of daily looks in the peeking simulation.
	Days int
	// PowerLift is the planted relative conversion lift for the power row.
	PowerLift float64
	Method    RelativeMethod
	Level     float64
	// CUPEDCorrelation is the pre/post correlation ρ of the CUPED rows
	// (revenue per visitor, σ = 1, raw); 0 leaves them out.
	CUPEDCorrelation float64 `json:"cuped_correlation"`
	Seed             uint64
	Workers          int `json:"-"`
}

// Report is the suite's outcome. AA holds one row per metric: conversion,
// then revenue per visitor and average order value at σ = 1 and σ = 2, each
// raw and winsorized at DefaultWinsorPercentile (the product default).
type Report struct {
	Config ReportConfig       `json:"config"`
	AA     []SimulationResult `json:"aa"`
	// Peeking is the A/A conversion test looked at daily.
	Peeking PeekingResult `json:"peeking"`
	// Power is the conversion test at the planted lift; NormalPower what
	// normal theory expects of it.
	Power       SimulationResult `json:"power"`
	NormalPower float64          `json:"normal_power"`
	// PeekingPower is the daily-peeked test at the planted lift: what the
	// sequential test's safety costs in power.
	PeekingPower PeekingResult `json:"peeking_power"`
	// CUPED is the suite's CUPED part; absent when CUPEDCorrelation is 0.
	CUPED *CUPEDReport `json:"cuped,omitempty"`
}

// CUPEDReport is CUPED on revenue per visitor whose value before the test
// correlates ρ with its value in it: A/A tests and tests at the planted
// lift, each analysed with CUPED and without on the same draws, beside
// normal theory without and with the variance reduced by 1 − ρ².
type CUPEDReport struct {
	Correlation      float64          `json:"correlation"`
	AA               SimulationResult `json:"aa"`
	Power            SimulationResult `json:"power"`
	NormalPower      float64          `json:"normal_power"`
	NormalPowerCUPED float64          `json:"normal_power_cuped"`
}

// CUPEDSigma is the σ of the CUPED rows' orders: the raw revenue row that
// is calibrated without winsorizing.
const CUPEDSigma = 1

// simulateCUPEDReport runs the CUPED rows of the suite.
func simulateCUPEDReport(cfg ReportConfig, base SimulationConfig) (*CUPEDReport, error) {
	rho := cfg.CUPEDCorrelation
	c := base
	c.Kind, c.Sigma, c.CUPEDCorrelation, c.Seed = KindMean, CUPEDSigma, rho, cfg.Seed+400
	aa, err := Simulate(c)
	if err != nil {
		return nil, err
	}
	c.Lift, c.Seed = cfg.PowerLift, cfg.Seed+500
	power, err := Simulate(c)
	if err != nil {
		return nil, err
	}
	theory := func(reduction float64) float64 {
		return NormalPowerMean(cfg.Conversion, CUPEDSigma, rho, cfg.PowerLift, cfg.Visitors, cfg.Level, reduction)
	}
	return &CUPEDReport{Correlation: rho, AA: aa, Power: power, NormalPower: theory(1), NormalPowerCUPED: theory(1 - rho*rho)}, nil
}

// PowerWithinTarget reports whether both simulated powers are within
// TargetPowerTolerance of their normal theory.
func (r CUPEDReport) PowerWithinTarget() (adjusted, plain bool) {
	return near(r.Power.Significant.Rate, r.NormalPowerCUPED, TargetPowerTolerance),
		near(r.Power.WithoutCUPED.Significant.Rate, r.NormalPower, TargetPowerTolerance)
}

// SimulateReport runs the calibration suite. Each row has its own seed
// (Seed + row), so rows are independent and every row is reproducible.
func SimulateReport(cfg ReportConfig) (Report, error) {
	cfg.Level = cmp.Or(cfg.Level, DefaultLevel)
	base := SimulationConfig{Visitors: cfg.Visitors, Runs: cfg.Runs, Conversion: cfg.Conversion,
		Method: cfg.Method, Level: cfg.Level, Workers: cfg.Workers}
	rows := []SimulationConfig{{Kind: KindProportion}}
	for _, kind := range []MetricKind{KindMean, KindRatio} {
		for _, sigma := range []float64{1, 2} {
			for _, w := range []float64{0, DefaultWinsorPercentile} {
				rows = append(rows, SimulationConfig{Kind: kind, Sigma: sigma, Winsorize: w})
			}
		}
	}
	r := Report{Config: cfg}
	for i, row := range rows {
		c := base
		c.Kind, c.Sigma, c.Winsorize, c.Seed = row.Kind, row.Sigma, row.Winsorize, cfg.Seed+uint64(i)
		res, err := Simulate(c)
		if err != nil {
			return Report{}, err
		}
		r.AA = append(r.AA, res)
	}
	var err error
	r.Peeking, err = SimulatePeeking(PeekingConfig{Visitors: cfg.Visitors, Days: cfg.Days, Runs: cfg.Runs,
		Conversion: cfg.Conversion, Level: cfg.Level, Seed: cfg.Seed + 100, Workers: cfg.Workers})
	if err != nil {
		return Report{}, err
	}
	power := base
	power.Kind, power.Lift, power.Seed = KindProportion, cfg.PowerLift, cfg.Seed+200
	if r.Power, err = Simulate(power); err != nil {
		return Report{}, err
	}
	r.NormalPower = NormalPower(cfg.Conversion, cfg.PowerLift, cfg.Visitors, cfg.Level)
	r.PeekingPower, err = SimulatePeeking(PeekingConfig{Visitors: cfg.Visitors, Days: cfg.Days, Runs: cfg.Runs,
		Conversion: cfg.Conversion, Lift: cfg.PowerLift, Level: cfg.Level, Seed: cfg.Seed + 300, Workers: cfg.Workers})
	if err != nil {
		return Report{}, err
	}
	if cfg.CUPEDCorrelation > 0 {
		if r.CUPED, err = simulateCUPEDReport(cfg, base); err != nil {
			return Report{}, err
		}
	}
	return r, nil
}

// FPRWithinTarget reports whether an A/A row meets both targets at level:
// the overall rate within TargetFPRTolerance of α and each direction within
// TargetDirectionTolerance of α/2.
func (r SimulationResult) FPRWithinTarget() bool {
	alpha := 1 - r.Config.Level
	return near(r.Significant.Rate, alpha, TargetFPRTolerance) &&
		near(r.Losses.Rate, alpha/2, TargetDirectionTolerance) &&
		near(r.Wins.Rate, alpha/2, TargetDirectionTolerance)
}

// PowerWithinTarget reports whether the simulated power (significant in
// either direction) is within TargetPowerTolerance of normal theory.
func (r Report) PowerWithinTarget() bool {
	return near(r.Power.Significant.Rate, r.NormalPower, TargetPowerTolerance)
}

// near allows for the rounding of rates read off counts.
func near(v, want, tol float64) bool { return math.Abs(v-want) <= tol+1e-12 }

// Identification math (dynamics/identify.h) against independent references: the Student t
// quantiles from printed tables, a synthetic problem with known truth, and the paper's own fit
// of seed 000 Table 2 (K_ML 3.266 [3.204, 3.328], M_C 0.04052 [0.04022, 0.04082]).
#include <dynamics/identify.h>

#include <gtest/gtest.h>

#include "validation_record.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <vector>

namespace id = sim::dynamics::identify;

namespace {

// Seed 000 Table 2 (also /work/shared/data/seed000_table2_efficiency.csv; the CLI test reads the
// file through the program).
const std::vector<double> kTorque = {0.1, 0.11, 0.15, 0.2, 0.24, 0.3, 0.4, 0.5, 0.6, 0.7};
const std::vector<double> kEta = {0.461, 0.500, 0.600, 0.664, 0.700,
                                  0.732, 0.766, 0.786, 0.801, 0.810};

TEST(StudentT, QuantilesMatchPrintedTables) {
  // Two-sided 95 % critical values from standard t tables (4 decimals printed there).
  EXPECT_NEAR(id::studentTQuantile(0.975, 1), 12.7062, 1e-4);
  EXPECT_NEAR(id::studentTQuantile(0.975, 2), 4.3027, 1e-4);
  EXPECT_NEAR(id::studentTQuantile(0.975, 8), 2.3060, 1e-4);
  EXPECT_NEAR(id::studentTQuantile(0.975, 30), 2.0423, 1e-4);
  EXPECT_NEAR(id::studentTQuantile(0.95, 10), 1.8125, 1e-4);
  EXPECT_NEAR(id::studentTQuantile(0.025, 8), -2.3060, 1e-4);
  // dof → ∞ tends to the normal quantile 1.959964.
  EXPECT_NEAR(id::studentTQuantile(0.975, 100000), 1.959964, 1e-4);
  EXPECT_THROW(id::studentTQuantile(0.975, 0), std::invalid_argument);
  EXPECT_THROW(id::studentTQuantile(1.0, 5), std::invalid_argument);
}

TEST(Identify, ExactDataRecoversTruthWithZeroWidthIntervals) {
  // Noise-free data from eq. 27 with other parameters than the paper's: the fit must find them.
  const double kml = 2.0;
  const double mc = 0.07;
  std::vector<double> eta;
  for (double m : kTorque) eta.push_back(id::efficiencyModel(m, kml, mc));
  const auto fit = id::fitEfficiency(kTorque, eta);
  EXPECT_NEAR(fit.K_ML, kml, 1e-9);
  EXPECT_NEAR(fit.M_C_Nm, mc, 1e-12);
  EXPECT_LT(fit.K_ML_half_width, 1e-6);
}

TEST(Identify, GenericLevenbergMarquardtFindsExponentialFromFarStart) {
  // y = 2 exp(−0.5 x): nonlinear in the rate; start far away to exercise the damping.
  std::vector<double> x, y;
  for (int k = 0; k < 12; ++k) {
    x.push_back(0.5 * k);
    // Deterministic ±1e-3 perturbation so the residual variance is nonzero.
    y.push_back(2.0 * std::exp(-0.5 * x.back()) + ((k % 2) ? 1e-3 : -1e-3));
  }
  const auto res = [&](const Eigen::VectorXd& p, Eigen::VectorXd& r, Eigen::MatrixXd& j) {
    for (int k = 0; k < 12; ++k) {
      const double e = std::exp(-p(1) * x[k]);
      r(k) = p(0) * e - y[k];
      j(k, 0) = e;
      j(k, 1) = -p(0) * x[k] * e;
    }
  };
  Eigen::VectorXd p0(2);
  p0 << 0.2, 3.0;
  const auto fit = id::leastSquares(res, p0, 12);
  EXPECT_TRUE(fit.converged);
  EXPECT_NEAR(fit.params(0), 2.0, 3e-3);
  EXPECT_NEAR(fit.params(1), 0.5, 3e-3);
  // The truth lies inside the 95 % intervals, which are not degenerate.
  EXPECT_GT(fit.half_width(0), 0.0);
  EXPECT_LT(std::abs(fit.params(0) - 2.0), fit.half_width(0) * 3.0);
}

TEST(Identify, Seed000Table2FallsInsidePaperIntervals) {
  const auto fit = id::fitEfficiency(kTorque, kEta);
  // The paper's 95 % intervals (seed 000, section 3): the estimates must fall inside.
  EXPECT_GT(fit.K_ML, 3.204);
  EXPECT_LT(fit.K_ML, 3.328);
  EXPECT_GT(fit.M_C_Nm, 0.04022);
  EXPECT_LT(fit.M_C_Nm, 0.04082);
  // Closer: our centre within a tenth of the paper's half-width of the paper's centre, and our
  // half-widths within 10 % of the paper's (the same linearised s²(JᵀJ)⁻¹ with t(0.975, 8) as
  // MATLAB's nlparci). Measured: K_ML 3.2611 vs 3.266 (0.0049 off, 8 % of the half-width; the
  // paper does not say more about its fit), M_C 0.040527 vs 0.04052.
  EXPECT_NEAR(fit.K_ML, 3.266, 0.1 * 0.062);
  EXPECT_NEAR(fit.M_C_Nm, 0.04052, 0.1 * 0.00030);
  EXPECT_NEAR(fit.K_ML_half_width, 0.062, 0.1 * 0.062);
  EXPECT_NEAR(fit.M_C_half_width, 0.00030, 0.1 * 0.00030);
  EXPECT_EQ(fit.dof, 8);
  // Our intervals are not inside the paper's: they are as wide within 10 %, around a K_ML 0.0049
  // lower, so ours reaches 0.0079 below the paper's lower bound.
  std::printf("K_ML %.4f [%.4f, %.4f]; M_C %.6f [%.6f, %.6f]\n", fit.K_ML,
              fit.K_ML - fit.K_ML_half_width, fit.K_ML + fit.K_ML_half_width, fit.M_C_Nm,
              fit.M_C_Nm - fit.M_C_half_width, fit.M_C_Nm + fit.M_C_half_width);
  sim::test::recordValidation(
      "Seed 000 Table 2, eq. 27 fit: K_ML (95 % CI)", "3.266 [3.204, 3.328]",
      sim::test::fmt("%.4f ", fit.K_ML) +
          sim::test::fmt("[%.4f, ", fit.K_ML - fit.K_ML_half_width) +
          sim::test::fmt("%.4f]: the estimate is inside the paper's CI, the CI is not",
                         fit.K_ML + fit.K_ML_half_width),
      "estimate inside the paper's CI; centre within 0.1 half-width; half-width within 10 %");
  sim::test::recordValidation("Seed 000 Table 2, eq. 27 fit: M_C (95 % CI), N m",
                              "0.04052 [0.04022, 0.04082]",
                              sim::test::fmt("%.6f ", fit.M_C_Nm) +
                                  sim::test::fmt("[%.6f, ", fit.M_C_Nm - fit.M_C_half_width) +
                                  sim::test::fmt("%.6f]", fit.M_C_Nm + fit.M_C_half_width),
                              "as for K_ML");
}

TEST(Identify, BadInputIsRefusedWithAReason) {
  const std::vector<double> two = {0.1, 0.2};
  EXPECT_THROW(id::fitEfficiency(two, two), std::invalid_argument);
  const std::vector<double> zeroTorque = {0.0, 0.2, 0.3};
  const std::vector<double> eta3 = {0.5, 0.6, 0.7};
  try {
    id::fitEfficiency(zeroTorque, eta3);
    FAIL() << "a zero torque was accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("row 1"), std::string::npos) << e.what();
  }
  const std::vector<double> sameTorque = {0.2, 0.2, 0.2};
  EXPECT_THROW(id::fitEfficiency(sameTorque, eta3), std::invalid_argument);  // not identifiable
}

}  // namespace
